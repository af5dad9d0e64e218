// Package grpcbench measures the alternative to critsec's transport: a gRPC
// bidirectional stream under mutual TLS 1.3, carrying the same frames as
// opaque bytes (no protobuf: a raw codec), one stream per ordered pair.
package grpcbench

import (
	"context"
	"crypto/tls"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"

	"github.com/critsec/critsec/transport"
)

type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(b []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), b...)
	return nil
}
func (rawCodec) Name() string { return "raw" }

func init() { encoding.RegisterCodec(rawCodec{}) }

var desc = grpc.ServiceDesc{
	ServiceName: "critsec.Link",
	HandlerType: (*any)(nil),
	Streams: []grpc.StreamDesc{{
		StreamName: "Stream", ServerStreams: true, ClientStreams: true,
		Handler: func(_ any, s grpc.ServerStream) error {
			for {
				var b []byte
				if err := s.RecvMsg(&b); err != nil {
					return err
				}
				if err := s.SendMsg(&b); err != nil {
					return err
				}
			}
		},
	}},
}

func BenchmarkGRPCRoundTrip(b *testing.B) {
	ca, _ := transport.NewCA("bench")
	id1, _ := ca.Identity(1)
	id2, _ := ca.Identity(2)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{id2.Cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: id2.CA})))
	srv.RegisterService(&desc, nil)
	go srv.Serve(ln)
	defer srv.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{id1.Cert}, RootCAs: id1.CA, ServerName: transport.NodeName(2)})), grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	s, err := conn.NewStream(context.Background(), &desc.Streams[0], "/critsec.Link/Stream")
	if err != nil {
		b.Fatal(err)
	}
	msg := []byte{0, 0, 0, 14, 4, 1, 7, 'R', 'E', 'Q', 'U', 'E', 'S', 'T', 'Q', 2}
	rt := func() {
		if err := s.SendMsg(&msg); err != nil {
			b.Fatal(err)
		}
		var got []byte
		if err := s.RecvMsg(&got); err != nil {
			b.Fatal(err)
		}
	}
	rt()
	b.ResetTimer()
	for range b.N {
		rt()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(2*b.N), "µs/msg")
}

func BenchmarkGRPCStream(b *testing.B) {
	ca, _ := transport.NewCA("bench")
	id1, _ := ca.Identity(1)
	id2, _ := ca.Identity(2)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	got := make(chan struct{}, 1024)
	sink := grpc.ServiceDesc{ServiceName: "critsec.Sink", HandlerType: (*any)(nil), Streams: []grpc.StreamDesc{{StreamName: "Stream", ClientStreams: true, Handler: func(_ any, s grpc.ServerStream) error {
		for {
			var b []byte
			if err := s.RecvMsg(&b); err != nil {
				return err
			}
			got <- struct{}{}
		}
	}}}}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{id2.Cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: id2.CA})))
	srv.RegisterService(&sink, nil)
	go srv.Serve(ln)
	defer srv.Stop()
	conn, _ := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{id1.Cert}, RootCAs: id1.CA, ServerName: transport.NodeName(2)})), grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	defer conn.Close()
	s, err := conn.NewStream(context.Background(), &sink.Streams[0], "/critsec.Sink/Stream")
	if err != nil {
		b.Fatal(err)
	}
	msg := []byte{0, 0, 0, 14, 4, 1, 7, 'R', 'E', 'Q', 'U', 'E', 'S', 'T', 'Q', 2}
	s.SendMsg(&msg)
	<-got
	b.ResetTimer()
	done := make(chan struct{})
	go func() {
		for range b.N {
			<-got
		}
		close(done)
	}()
	for range b.N {
		if err := s.SendMsg(&msg); err != nil {
			b.Fatal(err)
		}
	}
	<-done
}
