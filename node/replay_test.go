package node

import (
	"context"
	"testing"

	walpkg "github.com/critsec/critsec/wal"
)

// FuzzReplay: any record after a log's first is taken or refused with an
// error by the replay of a node's log (a header, a call, a delivery, an
// acknowledgement, a detector output, a snapshot), and so is any first
// record; nothing panics or hangs. The seeds are the records of a real ftraymond node's log,
// compacted, so every record type is among them.
func FuzzReplay(f *testing.F) {
	cfg, nodes := startClusterWith(f, "alg: ftraymond\nn: 3\nk: 1\n", 3, nil, func(o *Options) { o.CompactEvery = 8 })
	ctx := context.Background()
	for range 6 {
		if err := nodes[2].Enter(ctx); err != nil {
			f.Fatal(err)
		}
		if err := nodes[2].Exit(ctx); err != nil {
			f.Fatal(err)
		}
	}
	for _, nd := range nodes {
		nd.Close()
	}
	var first []byte
	if _, err := walpkg.Read(LogPath(cfg, 3), func(rec []byte) error {
		if first == nil {
			first = append([]byte(nil), rec...)
		}
		f.Add(append([]byte(nil), rec...))
		return nil
	}); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{'H', 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}) // a header claiming 2^63 fields
	f.Fuzz(func(t *testing.T, rec []byte) {
		ms, err := cfg.Problem.Machines()
		if err != nil {
			t.Fatal(err)
		}
		r := newReplay(3, 3, cfg.Fingerprint(), ms[2], cfg.Problem.Decoder())
		if err := r.record(first); err != nil {
			t.Fatalf("the log's own header: %v", err)
		}
		_ = r.record(rec) // an error is fine, a panic or a hang is not
		_ = r.record(rec)
		if ms, err = cfg.Problem.Machines(); err != nil {
			t.Fatal(err)
		}
		_ = newReplay(3, 3, cfg.Fingerprint(), ms[2], cfg.Problem.Decoder()).record(rec) // as a log's first record
	})
}
