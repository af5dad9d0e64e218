package check_test

import "github.com/critsec/critsec/trace"

func traceHeader() trace.Header {
	return trace.Header{Alg: "raymond", N: 3, K: 2, Lo: 0, Hi: 1, FIFO: true}
}
