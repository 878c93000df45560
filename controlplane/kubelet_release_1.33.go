//go:build kubernetes1.33

package main

import (
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// What differs in 1.33 from 1.37 (kubelet_release.go): the prober manager's methods, which the
// kubelet calls without a context, and the name of a CRI image's size field.

func (r *readiness) AddPod(*v1.Pod) {}

func (r *readiness) UpdatePodStatus(pod *v1.Pod, status *v1.PodStatus) {
	r.updatePodStatus(pod, status)
}

// newImage is a runtime image as the image service stores it; cri-api 0.33's generated code names
// the size field Size_.
func newImage(id string, size uint64) *runtimeapi.Image {
	return &runtimeapi.Image{Id: id, Size_: size, RepoDigests: []string{id}, Spec: &runtimeapi.ImageSpec{Image: id}}
}
