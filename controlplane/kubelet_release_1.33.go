//go:build kubernetes1.33

package main

import (
	cadvisorapi "github.com/google/cadvisor/info/v1"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/kubernetes/pkg/kubelet/cm"
)

// What differs in 1.33 from 1.37 (kubelet_release.go): the prober manager's methods, which the
// kubelet calls without a context, the name of a CRI image's size field, the pod container
// manager's methods and the pod cgroup computation, which take no logger and no memory reservation
// policy, and where cadvisor's machine type lives.

func (r *readiness) AddPod(*v1.Pod) {}

func (r *readiness) UpdatePodStatus(pod *v1.Pod, status *v1.PodStatus) {
	r.updatePodStatus(pod, status)
}

// newImage is a runtime image as the image service stores it; cri-api 0.33's generated code names
// the size field Size_.
func newImage(id string, size uint64) *runtimeapi.Image {
	return &runtimeapi.Image{Id: id, Size_: size, RepoDigests: []string{id}, Spec: &runtimeapi.ImageSpec{Image: id}}
}

func (p *podCgroups) EnsureExists(pod *v1.Pod) error {
	p.create(pod)
	return nil
}

func (p *podCgroups) Destroy(name cm.CgroupName) error {
	p.remove(name)
	return nil
}

func (p *podCgroups) SetPodCgroupConfig(pod *v1.Pod, rc *cm.ResourceConfig) error {
	return p.set(pod, rc)
}

// podCgroupConfig is what the kubelet writes into a new pod's cgroup: CFS quota enforced (the
// kubelet's default), its default period, no memory QoS.
func podCgroupConfig(pod *v1.Pod) *cm.ResourceConfig {
	return cm.ResourceConfigForPod(pod, true, cm.QuotaPeriod, false)
}

func (m *machine) MachineInfo() (*cadvisorapi.MachineInfo, error) {
	info, err := m.Fake.MachineInfo()
	if err != nil {
		return nil, err
	}
	info.NumCores, info.MemoryCapacity = m.size.cores(), uint64(m.size.memory)
	return info, nil
}
