package node

import (
	"bytes"
	"errors"
	"fmt"
)

// loadsBack checks that snap, the 'S' record of rp's node, loads back
// exactly: a replay with a fresh machine (fresh returns one), given the
// log's header and snap, must encode the same snapshot again. The node
// runs it before replacing its log, so that a machine's ReadState
// stricter than the states the machine reaches can never leave a node
// unable to restart: such a snapshot is not written, and the log stays
// whole.
func loadsBack(rp *replay, fresh func() (*replay, error), snap []byte) error {
	r, err := fresh()
	if err != nil {
		return err
	}
	if err := r.record(appendHeader(nil, rp.id, rp.fp)); err != nil {
		return fmt.Errorf("the header: %w", err)
	}
	if err := r.record(snap); err != nil {
		return err
	}
	if !bytes.Equal(r.appendSnapshot(nil), snap) {
		return errors.New("the snapshot loads back as another state")
	}
	return nil
}

// freshReplay returns a function that builds a replay of node id of cfg
// with a fresh machine, like rp's.
func freshReplay(cfg *Config, rp *replay) func() (*replay, error) {
	return func() (*replay, error) {
		ms, err := cfg.Problem.Machines()
		if err != nil {
			return nil, err
		}
		return newReplay(rp.id, rp.n, rp.fp, ms[rp.id-1], rp.decode), nil
	}
}
