package main

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// etcdCluster is an embedded etcd cluster on loopback, members in this
// process, each with its data directory under dir.
type etcdCluster struct {
	members   []*embed.Etcd
	endpoints []string
}

// freeURL is a loopback URL on a port free a moment ago (embed needs the
// advertised port before it listens).
func freeURL() (url.URL, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return url.URL{}, err
	}
	defer ln.Close()
	return url.URL{Scheme: "http", Host: ln.Addr().String()}, nil
}

// startEtcd starts an etcd cluster of m members under dir, every member's
// fsync off when noFsync (embed.Config.UnsafeNoFsync).
func startEtcd(dir string, m int, noFsync bool) (*etcdCluster, error) {
	cfgs := make([]*embed.Config, m)
	var initial []string
	for i := range cfgs {
		peer, err := freeURL()
		if err != nil {
			return nil, err
		}
		client, err := freeURL()
		if err != nil {
			return nil, err
		}
		c := embed.NewConfig()
		c.Name = fmt.Sprintf("m%d", i+1)
		c.Dir = filepath.Join(dir, c.Name)
		c.ListenPeerUrls, c.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		c.ListenClientUrls, c.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		// etcd logs errors as it shuts down: to a file, not the table.
		c.LogLevel = "error"
		c.LogOutputs = []string{filepath.Join(dir, c.Name+".log")}
		c.UnsafeNoFsync = noFsync
		cfgs[i] = c
		initial = append(initial, c.Name+"="+peer.String())
	}
	ec := &etcdCluster{}
	for _, c := range cfgs {
		c.InitialCluster = strings.Join(initial, ",")
		e, err := embed.StartEtcd(c)
		if err != nil {
			ec.close()
			return nil, err
		}
		ec.members = append(ec.members, e)
		ec.endpoints = append(ec.endpoints, c.AdvertiseClientUrls[0].String())
	}
	for _, e := range ec.members {
		select {
		case <-e.Server.ReadyNotify():
		case <-time.After(30 * time.Second):
			ec.close()
			return nil, fmt.Errorf("etcd member %s not ready after 30 s", e.Config().Name)
		}
	}
	return ec, nil
}

func (ec *etcdCluster) close() {
	for _, e := range ec.members {
		e.Close()
	}
}
