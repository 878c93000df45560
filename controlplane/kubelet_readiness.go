package main

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/kubelet/cm/resourceupdates"
)

// readiness replaces kubemark's probetest.FakeManager, which reports every container ready even
// before it runs. A container is ready as the kubelet's own prober manager decides for a container
// without a readiness probe — once it runs — except that an image the catalog declares slow is
// ready only that long after its start. Probes a pod declares are not run: nothing listens on a
// hollow pod's IP.
//
// The kubelet recomputes readiness only when it syncs the pod; a slow container's ready time is
// not an event it would see, so readiness asks for a sync then through the container manager's
// update channel, which the kubelet's sync loop reads for exactly that purpose (pods to sync again).
type readiness struct {
	catalog *catalog
	resync  chan resourceupdates.Update

	mu sync.Mutex
	// pending holds the containers (by ID) whose ready time has a sync asked for already.
	pending map[string]bool
}

func newReadiness(c *catalog) *readiness {
	return &readiness{catalog: c, resync: make(chan resourceupdates.Update, 64), pending: map[string]bool{}}
}

// No probe workers to start or stop: readiness is computed from the container's state alone.
// (AddPod and UpdatePodStatus, whose signatures differ between releases, are in kubelet_release*.go.)
func (r *readiness) StopLivenessAndStartup(*v1.Pod)       {}
func (r *readiness) RemovePod(*v1.Pod)                    {}
func (r *readiness) CleanupPods(map[types.UID]sets.Empty) {}

// updatePodStatus sets Started and Ready on each container status, as the prober manager does.
func (r *readiness) updatePodStatus(pod *v1.Pod, status *v1.PodStatus) {
	for i := range status.ContainerStatuses {
		c := &status.ContainerStatuses[i]
		r.setReady(pod, c, containerImage(pod.Spec.Containers, c.Name))
	}
	for i := range status.InitContainerStatuses {
		c := &status.InitContainerStatuses[i]
		if !isRestartable(pod, c.Name) {
			// A plain init container is ready once it has completed.
			started := c.State.Running != nil || c.State.Terminated != nil
			c.Started = &started
			c.Ready = c.State.Terminated != nil && c.State.Terminated.ExitCode == 0
			continue
		}
		r.setReady(pod, c, containerImage(pod.Spec.InitContainers, c.Name))
	}
}

func (r *readiness) setReady(pod *v1.Pod, c *v1.ContainerStatus, image string) {
	running := c.State.Running != nil
	c.Started = &running
	if !running {
		c.Ready = false
		return
	}
	readyAt := c.State.Running.StartedAt.Add(r.catalog.readyAfter(image))
	c.Ready = !time.Now().Before(readyAt)
	if !c.Ready {
		r.syncAt(pod.UID, c.ContainerID, readyAt)
	}
}

// syncAt asks the kubelet to sync the pod at `at`, once per container.
func (r *readiness) syncAt(uid types.UID, containerID string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending[containerID] {
		return
	}
	r.pending[containerID] = true
	time.AfterFunc(time.Until(at), func() {
		r.resync <- resourceupdates.Update{PodUIDs: []string{string(uid)}}
		r.mu.Lock()
		delete(r.pending, containerID)
		r.mu.Unlock()
	})
}

func containerImage(containers []v1.Container, name string) string {
	for _, c := range containers {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}

func isRestartable(pod *v1.Pod, name string) bool {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return podutil.IsRestartableInitContainer(&pod.Spec.InitContainers[i])
		}
	}
	return false
}
