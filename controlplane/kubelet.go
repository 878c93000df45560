package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	kubeletapp "k8s.io/kubernetes/cmd/kubelet/app"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	cadvisortest "k8s.io/kubernetes/pkg/kubelet/cadvisor/testing"
	"k8s.io/kubernetes/pkg/kubelet/certificate/bootstrap"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubemark"
)

// runKubelet runs the real kubelet of one node without a container engine: kubemark's hollow
// kubelet (the kubelet's own code, with a fake cadvisor and a stub container manager) over the
// CRI layer of kubelet_runtime.go and kubelet_images.go, driven by the simulator's image catalog.
//
// It joins as the node's own identity, system:node:NAME, through TLS bootstrap: the bootstrap
// kubeconfig's user asks for a client certificate (a CSR the controller-manager approves and
// signs); the certificate is kept in --root-dir, so a restarted kubelet is the same node.
func runKubelet(args []string) int {
	flags := flag.NewFlagSet("kubelet", flag.ContinueOnError)
	name := flags.String("name", "", "the node's name (required)")
	rootDir := flags.String("root-dir", "", "folder for the kubelet's state, certificate and pod logs (required; kept across restarts)")
	bootstrapKubeconfig := flags.String("bootstrap-kubeconfig", "", "kubeconfig whose user may create node CSRs (required unless --root-dir holds a certificate)")
	imagesPath := flags.String("images", "", "the image catalog, JSON (required)")
	port := flags.Int("port", 10250, "the kubelet server's port on 127.0.0.1")
	podCIDR := flags.String("pod-cidr", "10.100.0.0/16", "pod IPs are handed out from here")
	nodeIP := flags.String("node-ip", "", "the node's InternalIP (default: the address of the default route's interface)")
	labels := flags.String("node-labels", "", "labels to register the node with, k=v,k2=v2")
	clusterDNS := flags.String("cluster-dns", "10.0.0.10", "the cluster DNS Service's IP, written into pods' resolv.conf")
	maxPods := flags.Int("max-pods", 110, "pods this node admits")
	cpu := flags.String("cpu", "8", "the node's CPU capacity and allocatable (a quantity: 8, 1500m)")
	memory := flags.String("memory", "32Gi", "the node's memory capacity and allocatable (a quantity)")
	leaseSeconds := flags.Int("lease-duration-seconds", 40, "the node Lease's duration; it is renewed every quarter of it")
	statusEvery := flags.Duration("node-status-update-frequency", 10*time.Second, "how often the node's status is computed and posted if changed")
	klog.InitFlags(flags)
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *name == "" || *rootDir == "" || *imagesPath == "" {
		fmt.Fprintln(os.Stderr, "kubelet: --name, --root-dir and --images are required")
		return 2
	}
	nodeLabels, err := parseLabels(*labels)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubelet: --node-labels: %v\n", err)
		return 2
	}
	size, err := parseNodeSize(*cpu, *memory)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubelet: %v\n", err)
		return 2
	}
	catalog, err := loadCatalog(*imagesPath, *name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubelet: --images: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	hollow := hollowOptions{
		name: *name, rootDir: *rootDir, bootstrapKubeconfig: *bootstrapKubeconfig, port: *port,
		podCIDR: *podCIDR, nodeIP: *nodeIP, clusterDNS: *clusterDNS, labels: nodeLabels, maxPods: *maxPods,
		leaseSeconds: int32(*leaseSeconds), statusEvery: *statusEvery, size: size,
	}
	if err := startHollowKubelet(ctx, hollow, catalog); err != nil {
		fmt.Fprintf(os.Stderr, "kubelet: %v\n", err)
		return 1
	}
	<-ctx.Done()
	klog.InfoS("kubelet: stopping", "node", *name)
	klog.Flush()
	return 0
}

type hollowOptions struct {
	name, rootDir, bootstrapKubeconfig string
	port                               int
	podCIDR, nodeIP, clusterDNS        string
	labels                             map[string]string
	maxPods                            int
	leaseSeconds                       int32
	statusEvery                        time.Duration
	size                               nodeSize
}

func startHollowKubelet(ctx context.Context, o hollowOptions, catalog *catalog) error {
	if err := os.MkdirAll(o.rootDir, 0o700); err != nil {
		return err
	}
	// kubemark makes its folders with os.MkdirTemp: inside the root folder, not in /tmp.
	if err := os.Setenv("TMPDIR", o.rootDir); err != nil {
		return err
	}
	kubeconfig := filepath.Join(o.rootDir, "kubelet.kubeconfig")
	if err := bootstrap.LoadClientCert(ctx, kubeconfig, o.bootstrapKubeconfig, filepath.Join(o.rootDir, "pki"), types.NodeName(o.name)); err != nil {
		return fmt.Errorf("TLS bootstrap: %w", err)
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	config.UserAgent = "kubelet/" + o.name
	config.ContentType = "application/vnd.kubernetes.protobuf"
	config.QPS, config.Burst = 50, 100 // the kubelet's defaults
	client, err := clientset.NewForConfig(config)
	if err != nil {
		return err
	}

	flags, kc := kubemark.GetHollowKubeletConfig(&kubemark.HollowKubeletOptions{
		NodeName: o.name, KubeletPort: o.port, MaxPods: o.maxPods, NodeLabels: o.labels,
	})
	// Folders that outlive a restart, as a node's do: the pod log folder is where a kubelet that
	// finds no container of a pod reads the pod's restart count back from.
	if err := os.RemoveAll(flags.RootDirectory); err != nil {
		return err
	}
	flags.RootDirectory = filepath.Join(o.rootDir, "kubelet")
	kc.StaticPodPath = filepath.Join(o.rootDir, "static-pods")
	kc.PodLogsDir = filepath.Join(o.rootDir, "pod-logs")
	for _, dir := range []string{flags.RootDirectory, kc.StaticPodPath, kc.PodLogsDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	flags.NodeIP = o.nodeIP
	// As a cluster's kubelets are configured: without it, every ClusterFirst pod gets a Warning
	// event MissingClusterDNS at each sync.
	kc.ClusterDNS = []string{o.clusterDNS}
	kc.Address = "127.0.0.1"
	kc.ProviderID = "kwave-sim://" + o.name
	// Heartbeats as often as the control plane's node grace period asks (a kubelet renews its
	// Lease every quarter of its duration).
	kc.NodeLeaseDurationSeconds = o.leaseSeconds
	kc.NodeStatusUpdateFrequency.Duration = o.statusEvery

	heartbeatConfig := *config
	heartbeatConfig.Timeout = min(o.statusEvery, time.Duration(o.leaseSeconds)*time.Second)
	heartbeatConfig.QPS = -1
	heartbeatClient, err := clientset.NewForConfig(&heartbeatConfig)
	if err != nil {
		return err
	}

	runtimeService, err := newRuntimeService(catalog, o.podCIDR)
	if err != nil {
		return err
	}
	ready := newReadiness(catalog)
	stub := cm.NewStubContainerManager()
	hollow := kubemark.NewHollowKubelet(flags, kc, client, heartbeatClient,
		&machine{Fake: &cadvisortest.Fake{NodeName: o.name}, size: o.size}, newImageService(catalog), runtimeService,
		&containerManager{
			ContainerManager: stub, updates: ready.resync,
			cgroups: newPodCgroups(stub.NewPodContainerManager()), reserved: o.size.reserved(),
		})
	deps := hollow.KubeletDeps
	deps.ProbeManager = ready
	// nil: the kubelet makes its own recorder, which posts Events (kubemark's FakeRecorder drops them).
	deps.Recorder = nil
	deps.EventClient = client.CoreV1()
	return kubeletapp.RunKubelet(ctx, &options.KubeletServer{KubeletFlags: *flags, KubeletConfiguration: *kc}, deps)
}

func parseLabels(s string) (map[string]string, error) {
	labels := map[string]string{}
	if s == "" {
		return labels, nil
	}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not k=v", pair)
		}
		labels[k] = v
	}
	return labels, nil
}
