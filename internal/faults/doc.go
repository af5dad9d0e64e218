// Package faults is a fault-injection harness for critsec run: it runs
// each member of a cluster as a real critsec run process in a network
// namespace of its own (a hub namespace with a bridge joins them), keeping
// a copy of a stand-in service (testdata/beat) running while the member is
// InCS, and injects faults: SIGSTOP and SIGCONT of critsec run or of any
// process below it, kill -9 of critsec run alone or of its whole unit and
// a restart on the same data directory, a partition of one member or of a
// minority and packet loss (nftables inside the namespaces), and delay (a
// TCP relay in the hub, a process of its own in the real-time scheduling
// class: the kernel may have no netem).
//
// Every copy of the service appends its heartbeat to one file, one write
// per line: the file's order is the order of the writes, so the record of
// which copies ran when needs no clock. Check reads it as one interval per
// copy and reports every span with more than k copies running, and with
// fewer than l once l ran. Cluster.CheckTrace merges the members' logs into
// one trace and runs the trace checker on it. docs/faults.md describes the
// cases and how to run them.
package faults
