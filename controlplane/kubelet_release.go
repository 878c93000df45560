//go:build !kubernetes1.33

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// What differs in 1.37 from 1.33 (kubelet_release_1.33.go): the prober manager's methods, which the
// kubelet calls with a context, and the name of a CRI image's size field.

func (r *readiness) AddPod(context.Context, *v1.Pod) {}

func (r *readiness) UpdatePodStatus(_ context.Context, pod *v1.Pod, status *v1.PodStatus) {
	r.updatePodStatus(pod, status)
}

// newImage is a runtime image as the image service stores it; cri-api 0.37's generated code names
// the size field Size.
func newImage(id string, size uint64) *runtimeapi.Image {
	return &runtimeapi.Image{Id: id, Size: size, RepoDigests: []string{id}, Spec: &runtimeapi.ImageSpec{Image: id}}
}
