package node

import "github.com/critsec/critsec/transport"

// ErrLogLost: a peer remembers more of the channels between it and this
// node than the node's log holds: the log lost records (a torn tail after
// a power loss with fsync off, or a deleted log), and the node stops
// rather than renumber or lose messages (docs/network.md, "A lost log").
var ErrLogLost = transport.ErrLogLost

// awaitPeers holds a node whose log is new until every peer has welcomed
// a connection of it, so that the handshakes have compared the channels
// with every peer's memory of them, before the machine takes any input: a
// member whose log was lost may have been InCS or held a token, and its
// machine's initial state must not act before the peers have said that
// they do not remember it. A peer that does (the transport's LogLost)
// stops the node with ErrLogLost, unless it rejoins
// (Options.RejoinWithEmptyLog): then the channels continue the peers'
// numbering, and a snapshot of the initial machine with those channels
// is the log's first record after its header, so that a restart replays
// from there. It reports whether the driver may go on.
func (nd *Node) awaitPeers() bool {
	if len(nd.peers) > 0 {
		nd.log.Info("new log: waiting until every peer has answered before taking any input")
	}
	select {
	case <-nd.tr.Welcomed():
	case err := <-nd.lost:
		nd.stop(err)
		return false
	case peer := <-nd.refused:
		nd.stop(refusedCrashed(peer))
		return false
	case <-nd.done:
		nd.stop(ErrClosed)
		return false
	}
	if !nd.rejoin {
		return true
	}
	adopted := false
	for _, j := range nd.peers {
		out, in := nd.tr.Acked(j), nd.tr.Confirmed(j)
		if out > 0 || in > 0 {
			adopted = true
			nd.rp.out[j].Acked, nd.rp.in[j], nd.logged[j] = out, in, out
		}
	}
	if !adopted {
		return true
	}
	nd.wal.Add(nd.rp.appendSnapshot(nil))
	if err := nd.wal.Commit(); err != nil {
		nd.stop(err)
		return false
	}
	nd.log.Warn("rejoined with an empty log: the machine starts from its initial state, the channels where the peers are")
	return true
}
