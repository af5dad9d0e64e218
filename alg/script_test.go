package alg

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/trace"
)

// TestScripts runs the scripts in testdata/scripts (testnet.RunScripts; -rewrite
// rewrites their outputs) on registered algorithms: new alg=NAME n=N l=L
// k=K coterie=C builds them through Resolve, with the default initial
// configuration or initial=1,2 (the ids InCS), and checks the property
// they guarantee; any other key=value is one of the algorithm's options
// (Spec.Options), e.g. lside=complement.
// testdata/scripts/gcs_paper_deadlock_n4.txt is the published MUTIN's deadlock at
// n = 4 on majority(4) with Maekawa as mx (docs/design/mutin-fix.md).
func TestScripts(t *testing.T) {
	testnet.RunScripts(t, "testdata/scripts", func(args map[string]string) (testnet.Setup, error) {
		a, err := Lookup(args["alg"])
		if err != nil {
			return testnet.Setup{}, err
		}
		n, err1 := testnet.Int(args, "n")
		l, err2 := testnet.Int(args, "l")
		k, err3 := testnet.Int(args, "k")
		if err := errors.Join(err1, err2, err3); err != nil {
			return testnet.Setup{}, err
		}
		spec := a.SpecFor(n, l, k)
		spec.Coterie = args["coterie"]
		for key, v := range args {
			switch key {
			case "alg", "n", "l", "k", "coterie":
			case "initial":
				for f := range strings.SplitSeq(v, ",") {
					id, err := strconv.Atoi(f)
					if err != nil {
						return testnet.Setup{}, fmt.Errorf("initial=%s: want ids like 1,2", v)
					}
					spec.Initial = append(spec.Initial, cs.ID(id))
				}
			default:
				if spec.Options == nil {
					spec.Options = map[string]string{}
				}
				spec.Options[key] = v
			}
		}
		pr, err := Resolve(spec)
		if err != nil {
			return testnet.Setup{}, err
		}
		ms, err := pr.Machines()
		h := trace.Header{Alg: a.Name, L: pr.Params.L, K: pr.Params.K, Coterie: pr.Coterie, Quorums: pr.Params.Quorums}
		return testnet.Setup{Machines: ms, Property: pr.Property, Header: h}, err
	})
}
