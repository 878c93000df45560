package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
)

// runtimeService is the CRI runtime service of a hollow kubelet: cri-api's FakeRuntimeService
// keeps the sandboxes and containers, and this layer makes them look like containerd's to the
// kubelet and to kwave:
//   - container IDs are 64 hex digits, unique across kubelet restarts (the fake's own IDs,
//     sandbox_name_attempt, come back the same after a restart, as no real runtime's do);
//   - each sandbox gets its own IP from the node's pod CIDR (the fake gives every pod one IP);
//   - a container reports the image as containerd does: `image` the normalized tag the pod asked
//     for, `imageID` the registry digest form (the fake reports the image string twice);
//   - starting and stopping take the simulator's step times, and a container of a crashing image
//     exits with code 1 after the simulator's crash time, so the kubelet's own restart back-off
//     (CrashLoopBackOff) follows;
//   - a container's status reports the Linux resources it was created with, and those of the last
//     UpdateContainerResources, as containerd reports them from the container's spec: the kubelet
//     reads a resize's outcome there (status.containerStatuses[].resources); the fake reports none.
type runtimeService struct {
	*critest.FakeRuntimeService
	catalog *catalog
	// boot makes this process's container IDs differ from any earlier run's.
	boot   [16]byte
	podIPs *ipPool
}

func newRuntimeService(c *catalog, podCIDR string) (*runtimeService, error) {
	pool, err := newIPPool(podCIDR)
	if err != nil {
		return nil, err
	}
	r := &runtimeService{FakeRuntimeService: critest.NewFakeRuntimeService(), catalog: c, podIPs: pool}
	// A runtime whose status is nil fails the kubelet's sanity check: no pod would ever sync.
	r.FakeStatus = &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: true},
	}}
	if _, err := rand.Read(r.boot[:]); err != nil {
		return nil, err
	}
	return r, nil
}

// Version names the runtime as the node reports it (`containerRuntimeVersion`), and the kubelet
// prefixes container IDs with its name: containerd's, as this layer answers as containerd does
// (image names, error texts), with a version that says what it is.
func (r *runtimeService) Version(ctx context.Context, apiVersion string) (*runtimeapi.VersionResponse, error) {
	v, err := r.FakeRuntimeService.Version(ctx, apiVersion)
	if err != nil {
		return nil, err
	}
	v.RuntimeName, v.RuntimeVersion = "containerd", "1.7.24-kwave-hollow"
	return v, nil
}

func (r *runtimeService) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	id, err := r.FakeRuntimeService.RunPodSandbox(ctx, config, handler)
	if err != nil {
		return "", err
	}
	r.Lock()
	defer r.Unlock()
	if sandbox, ok := r.Sandboxes[id]; ok {
		sandbox.Network = &runtimeapi.PodSandboxNetworkStatus{Ip: r.podIPs.next()}
	}
	return id, nil
}

func (r *runtimeService) CreateContainer(ctx context.Context, sandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	fakeID, err := r.FakeRuntimeService.CreateContainer(ctx, sandboxID, config, sandboxConfig)
	if err != nil {
		return "", err
	}
	r.Lock()
	defer r.Unlock()
	c := r.Containers[fakeID]
	delete(r.Containers, fakeID)
	sum := sha256.Sum256(append(r.boot[:], fakeID...))
	c.Id = hex.EncodeToString(sum[:])
	r.Containers[c.Id] = c
	c.Resources = linuxResources(config.GetLinux().GetResources())
	// The kubelet passes the image ID it got from the image service; containerd reports the
	// name the pod asked for (normalized) beside it.
	c.ImageRef = config.Image.Image
	c.Image = &runtimeapi.ImageSpec{
		Image:              config.Image.UserSpecifiedImage,
		UserSpecifiedImage: config.Image.UserSpecifiedImage,
		RuntimeHandler:     config.Image.RuntimeHandler,
		Annotations:        config.Image.Annotations,
	}
	if named, err := normalize(config.Image.UserSpecifiedImage); err == nil {
		c.Image.Image = named.String()
	}
	// containerd creates the log file at once; a kubelet that finds no container of the pod (it
	// was restarted, and the fake runtime with it) counts restarts from these files.
	// (kubemark's FakeOS makes no folders for the kubelet, so the folder is made here.)
	if dir := sandboxConfig.GetLogDirectory(); dir != "" && config.LogPath != "" {
		path := filepath.Join(dir, config.LogPath)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
			if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				_ = f.Close()
			}
		}
	}
	return c.Id, nil
}

func (r *runtimeService) StartContainer(ctx context.Context, id string) error {
	if err := sleep(ctx, r.catalog.scaled(r.catalog.file.Timing.StartMs)); err != nil {
		return err
	}
	if err := r.FakeRuntimeService.StartContainer(ctx, id); err != nil {
		return err
	}
	r.Lock()
	var userImage string
	if c, ok := r.Containers[id]; ok {
		userImage = c.Image.UserSpecifiedImage
	}
	r.Unlock()
	if image := r.catalog.resolve(userImage); image != nil && image.Crash {
		time.AfterFunc(r.catalog.scaled(r.catalog.file.Timing.CrashMs), func() { r.exit(id, 1, "Error") })
	}
	return nil
}

func (r *runtimeService) StopContainer(ctx context.Context, id string, timeout int64) error {
	if err := sleep(ctx, r.catalog.scaled(r.catalog.file.Timing.StopMs)); err != nil {
		return err
	}
	return r.FakeRuntimeService.StopContainer(ctx, id, timeout)
}

// UpdateContainerResources records the container's new Linux resources, which its status reports
// from then on. containerd updates a container in any state (a stopped one's spec only), and
// refuses an unknown ID.
func (r *runtimeService) UpdateContainerResources(ctx context.Context, id string, resources *runtimeapi.ContainerResources) error {
	if err := r.FakeRuntimeService.UpdateContainerResources(ctx, id, resources); err != nil {
		return err
	}
	r.Lock()
	defer r.Unlock()
	c, ok := r.Containers[id]
	if !ok {
		return status.Errorf(codes.NotFound, "failed to find container %q: not found", id)
	}
	if linux := resources.GetLinux(); linux != nil {
		// A new value, never a change in place: a status handed out earlier keeps what it said.
		c.Resources = linuxResources(linux)
		c.LinuxResources = c.Resources.Linux
	}
	return nil
}

// linuxResources is a container status's resources: a copy of what the kubelet gave.
func linuxResources(linux *runtimeapi.LinuxContainerResources) *runtimeapi.ContainerResources {
	if linux == nil {
		return nil
	}
	// A field-by-field copy: cri-api's messages are gogo-generated in 1.33 and not in 1.37, so no
	// one proto library clones both.
	c := &runtimeapi.LinuxContainerResources{
		CpuPeriod: linux.CpuPeriod, CpuQuota: linux.CpuQuota, CpuShares: linux.CpuShares,
		MemoryLimitInBytes: linux.MemoryLimitInBytes, MemorySwapLimitInBytes: linux.MemorySwapLimitInBytes,
		OomScoreAdj: linux.OomScoreAdj, CpusetCpus: linux.CpusetCpus, CpusetMems: linux.CpusetMems,
	}
	for _, h := range linux.HugepageLimits {
		c.HugepageLimits = append(c.HugepageLimits, &runtimeapi.HugepageLimit{PageSize: h.PageSize, Limit: h.Limit})
	}
	if linux.Unified != nil {
		c.Unified = make(map[string]string, len(linux.Unified))
		for k, v := range linux.Unified {
			c.Unified[k] = v
		}
	}
	return &runtimeapi.ContainerResources{Linux: c}
}

// exit ends a running container as its process would: exited, with the code and reason given.
func (r *runtimeService) exit(id string, code int32, reason string) {
	r.Lock()
	defer r.Unlock()
	c, ok := r.Containers[id]
	if !ok || c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	c.FinishedAt = time.Now().UnixNano()
	c.ExitCode = code
	c.Reason = reason
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ipPool hands out the addresses of a CIDR in turn, skipping the network address; it wraps
// around, as a pod's address is free again long before 65,000 more pods have started.
type ipPool struct {
	base net.IP
	size uint64
	n    atomic.Uint64
}

func newIPPool(cidr string) (*ipPool, error) {
	_, network, err := net.ParseCIDR(cidr)
	if err != nil || network.IP.To4() == nil {
		return nil, fmt.Errorf("--pod-cidr %q: an IPv4 CIDR is needed", cidr)
	}
	ones, bits := network.Mask.Size()
	if bits-ones < 2 {
		return nil, fmt.Errorf("--pod-cidr %q: too small", cidr)
	}
	return &ipPool{base: network.IP.To4(), size: uint64(1)<<(bits-ones) - 2}, nil
}

func (p *ipPool) next() string {
	offset := uint32(p.n.Add(1)-1)%uint32(p.size) + 1
	ip := make(net.IP, 4)
	v := uint32(p.base[0])<<24 | uint32(p.base[1])<<16 | uint32(p.base[2])<<8 | uint32(p.base[3])
	v += offset
	ip[0], ip[1], ip[2], ip[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	return ip.String()
}
