// kwave-control-plane: one binary, one Kubernetes component per process. The subcommand picks
// the component; every argument after it goes to that component unchanged, so the flags are the
// upstream ones (`kwave-control-plane apiserver --help` lists them); the kubelet, hollow (kubelet.go),
// takes its own few.
//
//	kwave-control-plane etcd --data-dir D --client-port N --peer-port M
//	kwave-control-plane apiserver [kube-apiserver flags]
//	kwave-control-plane controller-manager [kube-controller-manager flags]
//	kwave-control-plane scheduler [kube-scheduler flags]
//	kwave-control-plane kubelet --name NODE --root-dir D --images CATALOG.json [...]
//	kwave-control-plane certs --dir D
//	kwave-control-plane version
//
// Components run in separate processes because each registers process-wide state (flags,
// feature gates, metrics) meant for one component per process.
package main

import (
	"fmt"
	"os"

	_ "time/tzdata" // CronJob time zones, as the upstream binaries embed them

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics on /metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // kubernetes_build_info
	"k8s.io/component-base/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

const usage = `usage: kwave-control-plane COMPONENT [FLAGS]
components: etcd, apiserver, controller-manager, scheduler, kubelet, certs, version`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	component, args := os.Args[1], os.Args[2:]
	dieWithParent()
	switch component {
	case "etcd":
		os.Exit(runEtcd(args))
	case "certs":
		os.Exit(runCerts(args))
	case "version":
		fmt.Println(version.Get().GitVersion)
	case "apiserver":
		os.Exit(runCobra(apiserver.NewAPIServerCommand(), args))
	case "controller-manager":
		os.Exit(runCobra(controllermanager.NewControllerManagerCommand(), args))
	case "scheduler":
		os.Exit(runCobra(scheduler.NewSchedulerCommand(), args))
	case "kubelet":
		os.Exit(runKubelet(args))
	default:
		fmt.Fprintf(os.Stderr, "kwave-control-plane: unknown component %q\n%s\n", component, usage)
		os.Exit(2)
	}
}

func runCobra(command *cobra.Command, args []string) int {
	command.SetArgs(args)
	return cli.Run(command)
}
