//go:build kubernetes1.33

package main

import v1 "k8s.io/api/core/v1"

// The prober manager's methods as the 1.33 kubelet calls them: without a context.

func (r *readiness) AddPod(*v1.Pod) {}

func (r *readiness) UpdatePodStatus(pod *v1.Pod, status *v1.PodStatus) {
	r.updatePodStatus(pod, status)
}
