package main

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Semaphore is a k-permit semaphore on etcd, the standard recipe (etcd
// ships none): each contender puts a key under prefix, bound to its
// session's lease; a contender holds a permit while fewer than k keys of
// the prefix were created before its own (smaller creation revision).
//
// Safety: a key created later never precedes an existing one, so once a
// contender has seen fewer than k keys before its own, that stays true
// until it deletes its key; every holder is thus among the first k keys,
// and there are at most k holders. Liveness: a waiter with m ≥ k keys
// before it watches the deletion of any of its k immediate predecessors;
// the deletion of an earlier key leaves m ≥ k (it waited with m > k).
type Semaphore struct {
	s      *concurrency.Session
	prefix string
	k      int
	key    string // this contender's key while it waits or holds
}

// NewSemaphore is a k-permit semaphore under prefix for session s's
// client; one Semaphore is one contender.
func NewSemaphore(s *concurrency.Session, prefix string, k int) *Semaphore {
	return &Semaphore{s: s, prefix: prefix + "/", k: k}
}

// Acquire waits until this contender holds a permit.
func (m *Semaphore) Acquire(ctx context.Context) error {
	c := m.s.Client()
	m.key = fmt.Sprintf("%s%x", m.prefix, m.s.Lease())
	put, err := c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(m.key), "=", 0)).
		Then(clientv3.OpPut(m.key, "", clientv3.WithLease(m.s.Lease()))).
		Else(clientv3.OpGet(m.key)).Commit()
	if err != nil {
		return err
	}
	mine := put.Header.Revision
	if !put.Succeeded {
		mine = put.Responses[0].GetResponseRange().Kvs[0].CreateRevision
	}
	for {
		// The keys created up to mine, oldest first.
		r, err := c.Get(ctx, m.prefix, clientv3.WithPrefix(), clientv3.WithMaxCreateRev(mine),
			clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
		if err != nil {
			return err
		}
		if len(r.Kvs) == 0 || string(r.Kvs[len(r.Kvs)-1].Key) != m.key {
			return fmt.Errorf("semaphore key %s lost (lease expired?)", m.key)
		}
		before := r.Kvs[:len(r.Kvs)-1] // the last is ours
		if len(before) < m.k {
			return nil
		}
		if err := m.waitDelete(ctx, before[len(before)-m.k:], r.Header.Revision); err != nil {
			return err
		}
	}
}

// waitDelete waits until one of kvs is deleted after revision rev.
func (m *Semaphore) waitDelete(ctx context.Context, kvs []*mvccpb.KeyValue, rev int64) error {
	watched := make(map[string]bool, len(kvs))
	for _, kv := range kvs {
		watched[string(kv.Key)] = true
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := range m.s.Client().Watch(wctx, m.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1), clientv3.WithFilterPut()) {
		if err := w.Err(); err != nil {
			return err
		}
		for _, ev := range w.Events {
			if watched[string(ev.Kv.Key)] {
				return nil
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("semaphore watch on %s closed", m.prefix)
}

// Release gives the permit back (or stops waiting for one).
func (m *Semaphore) Release(ctx context.Context) error {
	_, err := m.s.Client().Delete(ctx, m.key)
	return err
}
