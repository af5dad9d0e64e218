package main

import (
	"os"
	"testing"
)

// TestMain runs the test binary as critsec itself when asMainEnv is set:
// the tests start critsec node processes (procCluster) without building
// the command first.
func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}
