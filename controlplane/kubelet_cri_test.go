package main

import (
	"context"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func testCatalog() *catalog {
	c := &catalog{file: catalogFile{TimeScale: 1, Images: []catalogImage{
		{Name: "docker.io/library/nginx:1.25.3", Repository: "docker.io/library/nginx", Digest: digestA},
		{Name: "docker.io/library/nginx:retag", Repository: "docker.io/library/nginx", Digest: digestA},
		{Name: "docker.io/library/nginx:broken", Repository: "docker.io/library/nginx", Digest: digestB, PullFails: true},
	}}, byName: map[string]*catalogImage{}, missing: map[string]bool{"docker.io/library/nginx:retag": true}}
	for i := range c.file.Images {
		c.byName[c.file.Images[i].Name] = &c.file.Images[i]
	}
	return c
}

func TestResolveBySpelling(t *testing.T) {
	c := testCatalog()
	for _, ref := range []string{"nginx:1.25.3", "docker.io/library/nginx:1.25.3", "nginx@" + digestA} {
		if image := c.resolve(ref); image == nil || image.Digest != digestA {
			t.Errorf("resolve(%q) = %v, want the image of %s", ref, image, digestA)
		}
	}
	if image := c.resolve("nginx:9.9"); image != nil {
		t.Errorf("an unknown tag resolved to %v", image)
	}
}

func TestPullStoresByDigestAndTag(t *testing.T) {
	s := newImageService(testCatalog())
	ctx := context.Background()
	id, err := s.PullImage(ctx, &runtimeapi.ImageSpec{Image: "nginx:1.25.3"}, nil, nil)
	if err != nil || id != "docker.io/library/nginx@"+digestA {
		t.Fatalf("pull = %q, %v; want the registry digest form", id, err)
	}
	for _, ref := range []string{"nginx:1.25.3", id, "nginx@" + digestA} {
		if status, _ := s.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: ref}, false); status.Image == nil {
			t.Errorf("ImageStatus(%q): not present after the pull", ref)
		}
	}
	// Another tag of the same digest is not present until it is pulled, as in containerd.
	if status, _ := s.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: "nginx:retag"}, false); status.Image != nil {
		t.Errorf("an unpulled tag is present")
	}
}

func TestPullFailuresReadAsContainerd(t *testing.T) {
	s := newImageService(testCatalog())
	for _, ref := range []string{"nginx:broken", "nginx:9.9", "nginx:retag" /* missing on this node */} {
		_, err := s.PullImage(context.Background(), &runtimeapi.ImageSpec{Image: ref}, nil, nil)
		if err == nil || !strings.Contains(err.Error(), "code = NotFound desc = failed to pull and unpack image") {
			t.Errorf("pull %q: %v; want containerd's NotFound", ref, err)
		}
	}
}

func TestIPPoolSkipsTheNetworkAddress(t *testing.T) {
	pool, err := newIPPool("10.101.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	if first, second := pool.next(), pool.next(); first != "10.101.0.1" || second != "10.101.0.2" {
		t.Errorf("got %s, %s; want 10.101.0.1, 10.101.0.2", first, second)
	}
	if _, err := newIPPool("fd00::/64"); err == nil {
		t.Error("an IPv6 CIDR was taken")
	}
}
