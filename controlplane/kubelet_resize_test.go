package main

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/kubernetes/pkg/kubelet/cm"
)

func newTestRuntime(t *testing.T) (*runtimeService, string) {
	t.Helper()
	r, err := newRuntimeService(testCatalog(), "10.100.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	sandbox, err := r.RunPodSandbox(context.Background(), &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "web-0", Namespace: "default", Uid: "u1"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	return r, sandbox
}

func createWith(t *testing.T, r *runtimeService, sandbox string, attempt uint32, linux *runtimeapi.LinuxContainerResources) string {
	t.Helper()
	id, err := r.CreateContainer(context.Background(), sandbox, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "nginx", Attempt: attempt},
		Image:    &runtimeapi.ImageSpec{Image: "docker.io/library/nginx@" + digestA, UserSpecifiedImage: "nginx:1.25.3"},
		Linux:    &runtimeapi.LinuxContainerConfig{Resources: linux},
	}, &runtimeapi.PodSandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func statusResources(t *testing.T, r *runtimeService, id string) *runtimeapi.LinuxContainerResources {
	t.Helper()
	s, err := r.ContainerStatus(context.Background(), id, false)
	if err != nil {
		t.Fatal(err)
	}
	return s.Status.GetResources().GetLinux()
}

// 100m CPU, 128Mi: as the kubelet writes a container's resources (shares, CFS quota and period).
var small = &runtimeapi.LinuxContainerResources{CpuShares: 102, CpuPeriod: 100000, MemoryLimitInBytes: 134217728}

func TestStatusReportsTheResourcesACreatedContainerWasGiven(t *testing.T) {
	r, sandbox := newTestRuntime(t)
	id := createWith(t, r, sandbox, 0, small)
	got := statusResources(t, r, id)
	if got.GetCpuShares() != 102 || got.GetMemoryLimitInBytes() != 134217728 {
		t.Fatalf("status resources %v; want those the container was created with", got)
	}
}

func TestUpdateContainerResourcesIsWhatTheStatusReportsAfter(t *testing.T) {
	r, sandbox := newTestRuntime(t)
	id := createWith(t, r, sandbox, 0, small)
	if err := r.StartContainer(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	before, _ := r.ContainerStatus(context.Background(), id, false)
	bigger := &runtimeapi.LinuxContainerResources{CpuShares: 256, CpuPeriod: 100000, MemoryLimitInBytes: 268435456}
	if err := r.UpdateContainerResources(context.Background(), id, &runtimeapi.ContainerResources{Linux: bigger}); err != nil {
		t.Fatal(err)
	}
	bigger.CpuShares = 1 // the kubelet's object is not the runtime's
	got := statusResources(t, r, id)
	if got.GetCpuShares() != 256 || got.GetMemoryLimitInBytes() != 268435456 {
		t.Fatalf("status resources %v after the update; want shares 256, 256Mi", got)
	}
	if old := before.Status.GetResources().GetLinux(); old.GetCpuShares() != 102 {
		t.Errorf("a status handed out before the update changed: %v", old)
	}
	if err := r.UpdateContainerResources(context.Background(), "nope", &runtimeapi.ContainerResources{Linux: bigger}); err == nil ||
		!strings.Contains(err.Error(), "NotFound") {
		t.Errorf("an update of an unknown container: %v; want NotFound", err)
	}
}

func TestARestartedContainerHasANewIDAndItsNewResources(t *testing.T) {
	r, sandbox := newTestRuntime(t)
	first := createWith(t, r, sandbox, 0, small)
	bigger := &runtimeapi.LinuxContainerResources{CpuShares: 102, CpuPeriod: 100000, MemoryLimitInBytes: 536870912}
	second := createWith(t, r, sandbox, 1, bigger)
	if first == second {
		t.Fatalf("the restarted container has the first one's ID %s", first)
	}
	if got := statusResources(t, r, second); got.GetMemoryLimitInBytes() != 536870912 {
		t.Errorf("restarted container's resources %v; want a 512Mi limit", got)
	}
	if got := statusResources(t, r, first); got.GetMemoryLimitInBytes() != 134217728 {
		t.Errorf("the old container's resources changed: %v", got)
	}
}

func testPod(requests, limits v1.ResourceList) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: "u1", Name: "web-0"},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "nginx", Resources: v1.ResourceRequirements{Requests: requests, Limits: limits},
		}}},
	}
}

func TestPodCgroupsReadAsAResizeReadsThem(t *testing.T) {
	p := newPodCgroups(cm.NewStubContainerManager().NewPodContainerManager())
	pod := testPod(v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("128Mi")}, nil)
	if _, err := p.GetPodCgroupConfig(pod, v1.ResourceCPU); err == nil || p.Exists(pod) {
		t.Fatal("a pod cgroup existed before the kubelet made it")
	}
	p.create(pod)
	cpu, err := p.GetPodCgroupConfig(pod, v1.ResourceCPU)
	if err != nil {
		t.Fatal(err)
	}
	if *cpu.CPUShares != 102 || *cpu.CPUQuota != -1 || *cpu.CPUPeriod != 100000 {
		t.Errorf("cpu shares %d quota %d period %d; want 102, -1 (max), 100000", *cpu.CPUShares, *cpu.CPUQuota, *cpu.CPUPeriod)
	}
	memory, _ := p.GetPodCgroupConfig(pod, v1.ResourceMemory)
	if *memory.Memory != -1 {
		t.Errorf("memory limit %d of a pod without one; want -1 (max)", *memory.Memory)
	}
	shares, limit := uint64(256), int64(536870912)
	if err := p.set(pod, &cm.ResourceConfig{CPUShares: &shares, Memory: &limit}); err != nil {
		t.Fatal(err)
	}
	cpu, _ = p.GetPodCgroupConfig(pod, v1.ResourceCPU)
	memory, _ = p.GetPodCgroupConfig(pod, v1.ResourceMemory)
	if *cpu.CPUShares != 256 || *cpu.CPUQuota != -1 || *memory.Memory != 536870912 {
		t.Errorf("after set: shares %d quota %d memory %d; want 256, -1, 512Mi", *cpu.CPUShares, *cpu.CPUQuota, *memory.Memory)
	}
	name, literal := p.GetPodContainerName(pod)
	if literal != "/kubepods/burstable/podu1" {
		t.Errorf("cgroup %q; want /kubepods/burstable/podu1", literal)
	}
	p.remove(name)
	if p.Exists(pod) {
		t.Error("the cgroup outlived its removal")
	}
}

func TestNodeSizeInWholeCoresWithTheRestReserved(t *testing.T) {
	size, err := parseNodeSize("1500m", "8Gi")
	if err != nil {
		t.Fatal(err)
	}
	reserved := size.reserved()[v1.ResourceCPU]
	if size.cores() != 2 || reserved.MilliValue() != 500 || size.memory != 8<<30 {
		t.Errorf("cores %d, reserved %s, memory %d; want 2, 500m, 8Gi", size.cores(), reserved.String(), size.memory)
	}
	whole, _ := parseNodeSize("8", "32Gi")
	if whole.cores() != 8 || whole.reserved() != nil {
		t.Errorf("a whole node: cores %d, reserved %v", whole.cores(), whole.reserved())
	}
	if _, err := parseNodeSize("0", "1Gi"); err == nil {
		t.Error("a node of no CPU was taken")
	}
}
