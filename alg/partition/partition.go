// Package partition implements the partitioning scheme of S. Bulgannawar
// and N. H. Vaidya, "A distributed K-mutual exclusion algorithm", ICDCS
// 1995, section 5: the N nodes are split into K clusters of about N/K
// nodes each, and each cluster runs a 1-mutual exclusion algorithm among
// its members. At most one node per cluster is InCS, so at most K in all.
//
// Clusters are contiguous blocks of ids: cluster c (c = 0..K-1) holds the
// nodes c·N/K + 1 .. (c+1)·N/K (integer division), so sizes differ by at
// most one. A node talks only to the members of its cluster.
//
// The 1-mutex is the dynamic-forest algorithm of section 2 with K = 1
// (package forest, one token per cluster, at the cluster's first node).
// Section 5 defines the scheme for an algorithm A_K as "executing A_1
// (i.e., A_K with K = 1) within each cluster", so A_1 of the forest
// algorithm is what the paper compares the forest algorithm with ("for our
// algorithm, partitioning approach does not perform better than the
// K-mutual exclusion algorithm"). With one token the request-modifier tags
// are always NULL and the token choice has nothing to choose: it is Naimi
// and Trehel's algorithm with the waiting queue carried by the token
// (package forest's doc), O(log(N/K)) messages per entry on average. ν
// INFORM messages go to other members of the cluster (at most all of
// them), so the option nu means what it means for forest.
package partition

import (
	"fmt"

	"github.com/critsec/critsec/alg/forest"
	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "partition"

// Clusters returns the K clusters of nodes 1..n, each in increasing order.
func Clusters(n, k int) [][]cs.ID {
	out := make([][]cs.ID, k)
	for c := range out {
		for id := c*n/k + 1; id <= (c+1)*n/k; id++ {
			out[c] = append(out[c], cs.ID(id))
		}
	}
	return out
}

// Validate checks p: 1 <= k <= n, l = 0, and at most one node InCS per
// cluster initially, its first node (the holder of the cluster's token).
func Validate(p cs.Params) error {
	if err := forest.Validate(cs.Params{N: p.N, L: p.L, K: p.K}); err != nil {
		return err
	}
	if err := p.CheckInitial(0, p.K); err != nil {
		return err
	}
	for _, id := range p.Initial {
		if !firstOfCluster(p.N, p.K, id) {
			return fmt.Errorf("initial: process %d cannot start InCS: only the first node of a cluster, which holds its token, can", id)
		}
	}
	return nil
}

// firstOfCluster reports whether id is the first node of its cluster.
func firstOfCluster(n, k int, id cs.ID) bool {
	for _, c := range Clusters(n, k) {
		if c[0] == id {
			return true
		}
	}
	return false
}

// New returns the machines of processes 1..n, in order: one forest
// machine with K = 1 per node, over its cluster. o.Choice is irrelevant
// with one token; o.Nu and o.Variant apply within each cluster.
func New(p cs.Params, o forest.Options) ([]cs.Machine, error) {
	if err := Validate(p); err != nil {
		return nil, err
	}
	ms := make([]cs.Machine, 0, p.N)
	for _, c := range Clusters(p.N, p.K) {
		for _, id := range c {
			ms = append(ms, forest.NewGroupMachine(id, c, 1, p.InitiallyInCS(id), o))
		}
	}
	return ms, nil
}
