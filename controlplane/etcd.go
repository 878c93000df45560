package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// runEtcd runs a single-member etcd on loopback, as a test cluster runs it: data in the given
// (temporary) directory and fsync off, since a lost test cluster is simply started again.
func runEtcd(args []string) int {
	flags := flag.NewFlagSet("etcd", flag.ContinueOnError)
	dataDir := flags.String("data-dir", "", "data directory (required)")
	clientPort := flags.Int("client-port", 2379, "loopback port for clients (the apiserver)")
	peerPort := flags.Int("peer-port", 2380, "loopback port for peers (one member: only itself)")
	logLevel := flags.String("log-level", "warn", "debug, info, warn or error")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: --data-dir is required")
		return 2
	}
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *clientPort)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *peerPort)}

	config := embed.NewConfig()
	config.Dir = *dataDir
	config.ListenClientUrls, config.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	config.ListenPeerUrls, config.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	config.InitialCluster = config.InitialClusterFromName(config.Name)
	config.UnsafeNoFsync = true
	config.LogLevel = *logLevel
	config.QuotaBackendBytes = 8 << 30

	server, err := embed.StartEtcd(config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		return 1
	}
	defer server.Close()
	select {
	case <-server.Server.ReadyNotify():
		fmt.Printf("etcd ready on %s\n", client.String())
	case <-time.After(60 * time.Second):
		fmt.Fprintln(os.Stderr, "etcd: not ready after 60s")
		return 1
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case err := <-server.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		return 1
	case <-stop:
		return 0
	}
}
