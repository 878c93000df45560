package main

import (
	"fmt"
	"math"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	v1qos "k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	cadvisortest "k8s.io/kubernetes/pkg/kubelet/cadvisor/testing"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubelet/cm/resourceupdates"
)

// containerManager is kubemark's stub container manager with what a node's own container manager
// does for a resize and for the node's size:
//   - pod cgroups (podCgroups): a resize reads and writes the pod's cgroup before and after it
//     updates the containers, and the stub's pod container manager refuses both ("not implemented");
//   - the node's allocatable CPU: cadvisor counts whole cores, so a node of 1500m CPU is a machine
//     of 2 cores with 500m reserved, as a node's --kube-reserved would reserve it;
//   - readiness's resync channel as its update channel (the stub's is nil: it never asks for a sync).
type containerManager struct {
	cm.ContainerManager
	updates  <-chan resourceupdates.Update
	cgroups  *podCgroups
	reserved v1.ResourceList
}

func (m *containerManager) Updates() <-chan resourceupdates.Update { return m.updates }

func (m *containerManager) NewPodContainerManager() cm.PodContainerManager { return m.cgroups }

func (m *containerManager) GetNodeAllocatableReservation() v1.ResourceList { return m.reserved }

// nodeSize is the CPU and memory a hollow node reports: its capacity, and its allocatable (equal
// unless the CPU is not a whole number of cores).
type nodeSize struct {
	milliCPU int64
	memory   int64
}

func parseNodeSize(cpu, memory string) (nodeSize, error) {
	c, err := resource.ParseQuantity(cpu)
	if err != nil || c.MilliValue() <= 0 {
		return nodeSize{}, fmt.Errorf("--cpu %q: a positive quantity is needed (8, 1500m)", cpu)
	}
	m, err := resource.ParseQuantity(memory)
	if err != nil || m.Value() <= 0 {
		return nodeSize{}, fmt.Errorf("--memory %q: a positive quantity is needed (32Gi)", memory)
	}
	return nodeSize{milliCPU: c.MilliValue(), memory: m.Value()}, nil
}

func (s nodeSize) cores() int { return int(math.Ceil(float64(s.milliCPU) / 1000)) }

// reserved is what allocatable lacks of capacity: the part of the last core the node does not have.
func (s nodeSize) reserved() v1.ResourceList {
	if extra := int64(s.cores())*1000 - s.milliCPU; extra > 0 {
		return v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(extra, resource.DecimalSI)}
	}
	return nil
}

// machine is kubemark's fake cadvisor with the node's size (the fake's is 1 core and 3.75 GiB).
// Its MachineInfo, whose signature and types differ between releases, is in kubelet_release*.go.
type machine struct {
	*cadvisortest.Fake
	size nodeSize
}

// podCgroups keeps each pod's cgroup values (CPU shares, quota and period, memory limit) as the
// kernel would: written when the kubelet makes the pod's cgroup and when a resize sets them, read
// back as a cgroup v2 node reads them (no limit reads as -1, "max"). A hollow node has no cgroup
// file system; the values are what the kubelet compares and writes during a resize. The methods
// whose signatures differ between releases are in kubelet_release*.go; the rest of the interface
// (memory usage: none, orphan clean-up: nothing to find) is the stub's.
type podCgroups struct {
	cm.PodContainerManager
	mu   sync.Mutex
	pods map[types.UID]*cm.ResourceConfig
}

func newPodCgroups(stub cm.PodContainerManager) *podCgroups {
	return &podCgroups{PodContainerManager: stub, pods: map[types.UID]*cm.ResourceConfig{}}
}

// GetPodContainerName names the pod's cgroup as the kubelet's cgroupfs driver does.
func (p *podCgroups) GetPodContainerName(pod *v1.Pod) (cm.CgroupName, string) {
	name := cm.CgroupName{"kubepods"}
	switch v1qos.GetPodQOS(pod) {
	case v1.PodQOSBurstable:
		name = append(name, "burstable")
	case v1.PodQOSBestEffort:
		name = append(name, "besteffort")
	}
	name = append(name, "pod"+string(pod.UID))
	return name, name.ToCgroupfs()
}

func (p *podCgroups) Exists(pod *v1.Pod) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.pods[pod.UID]
	return ok
}

// create makes the pod's cgroup with its values, unless it exists (EnsureExists).
func (p *podCgroups) create(pod *v1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.pods[pod.UID]; !ok {
		p.pods[pod.UID] = podCgroupConfig(pod)
	}
}

// remove deletes the cgroup of that name (Destroy).
func (p *podCgroups) remove(name cm.CgroupName) {
	if len(name) == 0 {
		return
	}
	uid, ok := strings.CutPrefix(name[len(name)-1], "pod")
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pods, types.UID(uid))
}

// GetPodCgroupConfig reads the CPU or the memory values of the pod's cgroup.
func (p *podCgroups) GetPodCgroupConfig(pod *v1.Pod, name v1.ResourceName) (*cm.ResourceConfig, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.pods[pod.UID]
	if !ok {
		cgroup, _ := p.GetPodContainerName(pod)
		return nil, fmt.Errorf("cgroup %v of pod %s does not exist", cgroup, pod.UID)
	}
	orMax := func(v *int64) *int64 {
		if v == nil {
			unlimited := int64(-1)
			return &unlimited
		}
		out := *v
		return &out
	}
	switch name {
	case v1.ResourceCPU:
		shares, period := uint64(cm.MinShares), uint64(cm.QuotaPeriod)
		if c.CPUShares != nil {
			shares = *c.CPUShares
		}
		if c.CPUPeriod != nil {
			period = *c.CPUPeriod
		}
		return &cm.ResourceConfig{CPUShares: &shares, CPUQuota: orMax(c.CPUQuota), CPUPeriod: &period}, nil
	case v1.ResourceMemory:
		return &cm.ResourceConfig{Memory: orMax(c.Memory)}, nil
	}
	return nil, fmt.Errorf("unsupported resource %v for the cgroup of pod %s", name, pod.UID)
}

// set writes the values given (the others keep theirs) into the pod's cgroup (SetPodCgroupConfig).
func (p *podCgroups) set(pod *v1.Pod, rc *cm.ResourceConfig) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.pods[pod.UID]
	if !ok {
		return fmt.Errorf("cgroup of pod %s does not exist", pod.UID)
	}
	next := *c
	if rc.CPUShares != nil {
		next.CPUShares = ptrTo(*rc.CPUShares)
	}
	if rc.CPUQuota != nil {
		next.CPUQuota = ptrTo(*rc.CPUQuota)
	}
	if rc.CPUPeriod != nil {
		next.CPUPeriod = ptrTo(*rc.CPUPeriod)
	}
	if rc.Memory != nil {
		next.Memory = ptrTo(*rc.Memory)
	}
	p.pods[pod.UID] = &next
	return nil
}

func ptrTo[T any](v T) *T { return &v }
