package node

import (
	"time"

	"github.com/critsec/critsec/cs"
)

// The failure detector of a node whose machine takes failure-detector
// input (cs.Detecting; docs/network.md, "Failure detection"): a trusting
// detector (class T, package detector) over the transport's heartbeats.
//
//   - On a new log it suspects every peer (a T module trusts nobody
//     before its first output), as the simulator's T modules do.
//   - A peer heard from since the node started (any frame, on either of
//     its two connections: data, pings, acknowledgements) is trusted.
//   - A trusted peer silent for Timeout is suspected, and that is final:
//     it is crashed for this node, its connections are refused for good
//     (transport.Refuse) and, if it is alive after all, it learns it
//     from the refusal and stops (ErrCrashed). So a process suspected
//     after being trusted never acts again in the cluster: trusting
//     accuracy holds by construction, at the price of a live process
//     stopped on a false suspicion, which is counted.
//
// The outputs are inputs of the machine like calls and deliveries:
// logged (record 'F') before their effects, replayed at a restart.

// detectTicker returns the detector's ticker (one that never fires when
// the detector is off) and its first outputs: on a new log, a suspicion
// of every peer.
func (nd *Node) detectTicker() (*time.Ticker, []cs.Input) {
	if nd.det.Heartbeat == 0 {
		t := time.NewTicker(time.Hour)
		t.Stop()
		return t, nil
	}
	var first []cs.Input
	if nd.detFresh {
		for _, j := range nd.peers {
			first = append(first, cs.Input{Kind: cs.InSuspect, Who: j})
		}
	}
	return time.NewTicker(nd.det.Heartbeat / 2), first
}

// detect returns the detector's new outputs: a trust of each peer heard
// from that is not trusted yet, a suspicion of each trusted peer silent
// for the timeout. A round that comes late (more than a heartbeat after
// the previous one: this process was paused — on a virtual machine, often
// with every other process —, or its driver waited on a slow fsync)
// suspects nobody, and silence is counted again from it, as from the
// node's start: the transport's readers did not run either, and the
// peers, paused too, have not sent since, so their silence would be this
// node's own.
//
// In majority mode (DetectorConfig.Mode) a trusted peer silent for the
// timeout gets this node's vote instead: its pings are echoed no more,
// for good (transport.MuteIf), the vote is logged (record 'V') and then
// sent in every ping; the peer is suspected, so declared crashed, once a
// majority of the members voted against it, this node's vote counted
// with those in its peers' latest pings. A member cut off from the
// majority never gathers the votes to declare anyone, and its own lease,
// which needs the echo of one of any majority's voters, lapses.
func (nd *Node) detect() ([]cs.Input, []cs.ID) { return nd.detectAt(time.Now(), nd.tr) }

// peerView is what the detector asks of the transport
// (transport.Transport).
type peerView interface {
	LastHeard(cs.ID) time.Time
	RefuseIf(cs.ID, func(time.Time) bool) bool
	MuteIf(cs.ID, func(time.Time) bool) bool
	Votes(cs.ID) cs.Set
}

// detectAt is detect at time now, with tv the transport: a suspicion (or
// a vote) is decided, and the peer cut off (or muted), in one step
// against its pings (RefuseIf, MuteIf), so that no echo renews its lease
// after the silence that condemns it (docs/fencing.md). It returns the
// detector's outputs and the new votes.
func (nd *Node) detectAt(now time.Time, tv peerView) (out []cs.Input, votes []cs.ID) {
	late := !nd.lastDetect.IsZero() && now.Sub(nd.lastDetect) > nd.det.Heartbeat
	nd.lastDetect = now
	if late {
		nd.metrics.lateRounds.Inc()
		nd.resumed = now
	}
	for _, j := range nd.peers {
		if nd.rp.crashed.Has(j) {
			continue
		}
		var silent time.Duration
		silentFor := func(heard time.Time) bool {
			last := heard
			if last.Before(nd.detStart) {
				last = nd.detStart // silent since this node started: count from then
			}
			if last.Before(nd.resumed) {
				last = nd.resumed // or since it resumed from a pause
			}
			silent = now.Sub(last)
			return silent > nd.det.Timeout
		}
		switch {
		case !nd.rp.trusted.Has(j) && tv.LastHeard(j).After(nd.detStart):
			out = append(out, cs.Input{Kind: cs.InTrust, Who: j})
			nd.metrics.trusts.Inc()
		case !nd.rp.trusted.Has(j):
		case nd.det.Mode != ModeMajority:
			if !late && tv.RefuseIf(j, silentFor) {
				out = append(out, cs.Input{Kind: cs.InSuspect, Who: j})
				nd.metrics.detection.Observe(silent.Seconds())
			}
		default:
			voted := nd.rp.votes.Has(j)
			if !voted && !late && tv.MuteIf(j, silentFor) {
				votes = append(votes, j)
				voted = true
				nd.metrics.votes.Inc()
			}
			count := 0
			if voted {
				count++
			}
			for _, v := range nd.peers {
				if v != j && tv.Votes(v).Has(j) {
					count++
				}
			}
			if count >= nd.det.Quorum(len(nd.peers)+1) {
				out = append(out, cs.Input{Kind: cs.InSuspect, Who: j})
				nd.metrics.detection.Observe(now.Sub(tv.LastHeard(j)).Seconds())
			}
		}
	}
	return out, votes
}

// declared acts on the suspicion of trusted peer j, once logged: j is
// crashed, for good (the transport refuses it already: detectAt).
func (nd *Node) declared(j cs.ID) {
	nd.tr.Refuse(j)
	nd.mu.Lock()
	nd.cut.Add(j)
	nd.mu.Unlock()
	nd.metrics.suspicions.Inc()
	nd.log.Warn("peer declared crashed", "peer", int(j), "silent_for_more_than", nd.det.Timeout.String())
}
