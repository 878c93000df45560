package main

import (
	"context"
	"time"

	"github.com/distribution/reference"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
)

// imageService is the CRI image service of a hollow kubelet: cri-api's FakeImageService holds the
// pulled images, and the catalog decides what a pull finds, how long it takes and whether it fails.
// Images are stored as containerd stores them: the ID is the registry digest form, the tags that
// were pulled are its RepoTags, so a tag never pulled here is not present even when another tag
// of the same digest is.
type imageService struct {
	*critest.FakeImageService
	catalog *catalog
}

func newImageService(c *catalog) *imageService {
	return &imageService{FakeImageService: critest.NewFakeImageService(), catalog: c}
}

// PullImage waits the image's pull time, then fails as containerd fails for a reference the
// registry does not have (so the kubelet's own ErrImagePull → ImagePullBackOff follows), or
// stores the image under its tag.
func (s *imageService) PullImage(ctx context.Context, spec *runtimeapi.ImageSpec, _ *runtimeapi.AuthConfig, _ *runtimeapi.PodSandboxConfig) (string, error) {
	image := s.catalog.resolve(spec.Image)
	select {
	case <-time.After(s.catalog.pullTime(image)):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	named, err := normalize(spec.Image)
	if err != nil {
		return "", status.Errorf(codes.InvalidArgument, "failed to parse image reference %q: %v", spec.Image, err)
	}
	if image == nil || image.PullFails || s.catalog.missingHere(spec.Image) {
		full := named.String()
		return "", status.Errorf(codes.NotFound, "failed to pull and unpack image %q: failed to resolve reference %q: %s: not found", full, full, full)
	}
	s.Lock()
	defer s.Unlock()
	id := image.imageRef()
	stored, ok := s.Images[id]
	if !ok {
		stored = newImage(id, image.SizeBytes)
		s.Images[id] = stored
	}
	if _, digested := named.(reference.Digested); !digested && !contains(stored.RepoTags, named.String()) {
		stored.RepoTags = append(stored.RepoTags, named.String())
	}
	return id, nil
}

// ImageStatus finds a pulled image by any spelling: its ID, a pulled tag, or a digest reference.
func (s *imageService) ImageStatus(_ context.Context, spec *runtimeapi.ImageSpec, _ bool) (*runtimeapi.ImageStatusResponse, error) {
	s.Lock()
	defer s.Unlock()
	return &runtimeapi.ImageStatusResponse{Image: s.find(spec.Image)}, nil
}

// RemoveImage removes the image a reference names (image garbage collection passes the ID).
func (s *imageService) RemoveImage(_ context.Context, spec *runtimeapi.ImageSpec) error {
	s.Lock()
	defer s.Unlock()
	if image := s.find(spec.Image); image != nil {
		delete(s.Images, image.Id)
	}
	return nil
}

// find must be called with the lock held.
func (s *imageService) find(ref string) *runtimeapi.Image {
	if image, ok := s.Images[ref]; ok {
		return image
	}
	named, err := normalize(ref)
	if err != nil {
		return nil
	}
	full := named.String()
	for _, image := range s.Images {
		if contains(image.RepoTags, full) || contains(image.RepoDigests, full) {
			return image
		}
	}
	// A digest reference to content pulled by tag: containerd finds the content by its digest too.
	if _, digested := named.(reference.Digested); digested {
		if image := s.catalog.resolve(ref); image != nil {
			return s.Images[image.imageRef()]
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
