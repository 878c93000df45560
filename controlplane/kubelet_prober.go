//go:build !kubernetes1.33

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// The prober manager's methods as the newer kubelets (1.37) call them: with a context.

func (r *readiness) AddPod(context.Context, *v1.Pod) {}

func (r *readiness) UpdatePodStatus(_ context.Context, pod *v1.Pod, status *v1.PodStatus) {
	r.updatePodStatus(pod, status)
}
