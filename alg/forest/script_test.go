package forest_test

import (
	"errors"
	"testing"

	"github.com/critsec/critsec/alg/forest"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

// TestScripts runs the scripts in testdata/scripts (testnet.RunScripts;
// -rewrite rewrites their outputs). testdata/scripts/paper_stale_inform.txt
// is the lost request of docs/design/forest-fix.md: the published variant
// queues P1's request at P1 itself; on the same schedule the corrected
// variant drops the stale INFORM and serves P1.
func TestScripts(t *testing.T) {
	testnet.RunScripts(t, "testdata/scripts", func(args map[string]string) (testnet.Setup, error) {
		n, err1 := testnet.Int(args, "n")
		k, err2 := testnet.Int(args, "k")
		nu, err3 := testnet.Int(args, "nu")
		v, err4 := testnet.Choice(args, "variant", map[string]forest.Variant{"paper": forest.Paper, "fixed": forest.Fixed})
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return testnet.Setup{}, err
		}
		ms, err := forest.New(cs.Params{N: n, K: k}, forest.Options{Nu: nu, Variant: v})
		if err != nil {
			return testnet.Setup{}, err
		}
		p, err := property.Global(n, 0, k)
		alg := forest.Name
		if v == forest.Paper {
			alg += "-paper"
		}
		return testnet.Setup{Machines: ms, Property: p, Header: trace.Header{Alg: alg, K: k}}, err
	})
}
