package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/distribution/reference"
)

// catalogFile is the image table the simulator writes for its kubelets (src/sim/real/kubelets.ts):
// the same images, digests and failure modes as the simulated kubelet reads from src/sim/images.ts,
// so that both kubelets pull, run and crash the same images the same way.
type catalogFile struct {
	// TimeScale multiplies every duration below (the fixture's timeScale).
	TimeScale float64        `json:"timeScale"`
	Timing    catalogTiming  `json:"timing"`
	Images    []catalogImage `json:"images"`
	// MissingImages lists, per node, the images its registry mirror lacks (pulls fail there only).
	MissingImages map[string][]string `json:"missingImages"`
}

// catalogTiming holds the simulator's default step durations, in milliseconds.
type catalogTiming struct {
	PullMs  float64 `json:"pullMs"`
	StartMs float64 `json:"startMs"`
	StopMs  float64 `json:"stopMs"`
	CrashMs float64 `json:"crashMs"`
}

type catalogImage struct {
	// Name is the normalized reference, e.g. docker.io/library/nginx:1.25.3.
	Name       string `json:"name"`
	Repository string `json:"repository"`
	Digest     string `json:"digest"`
	// ServesDigest, when set, is the content actually run (a mirror serving other content).
	ServesDigest string   `json:"servesDigest,omitempty"`
	SizeBytes    uint64   `json:"sizeBytes"`
	PullMs       *float64 `json:"pullMs,omitempty"`
	PullFails    bool     `json:"pullFails"`
	Crash        bool     `json:"crash"`
	ReadyAfterMs *float64 `json:"readyAfterMs,omitempty"`
}

// imageRef is what the runtime reports as the image's ID and as a container's imageID, the
// registry form containerd reports: docker.io/library/nginx@sha256:….
func (i *catalogImage) imageRef() string {
	digest := i.Digest
	if i.ServesDigest != "" {
		digest = i.ServesDigest
	}
	return i.Repository + "@" + digest
}

// catalog answers the runtime's questions about images for one node.
type catalog struct {
	file    catalogFile
	byName  map[string]*catalogImage
	missing map[string]bool
}

func loadCatalog(path, node string) (*catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &catalog{byName: map[string]*catalogImage{}, missing: map[string]bool{}}
	if err := json.Unmarshal(data, &c.file); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.file.TimeScale <= 0 {
		c.file.TimeScale = 1
	}
	for i := range c.file.Images {
		c.byName[c.file.Images[i].Name] = &c.file.Images[i]
	}
	for _, name := range c.file.MissingImages[node] {
		if named, err := normalize(name); err == nil {
			c.missing[named.String()] = true
		}
	}
	return c, nil
}

// normalize spells a reference as containerd does: nginx:1.25.3 → docker.io/library/nginx:1.25.3,
// nginx → docker.io/library/nginx:latest.
func normalize(ref string) (reference.Named, error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return nil, err
	}
	return reference.TagNameOnly(named), nil
}

// resolve finds what a pull of ref gets: the image of that tag, or of that digest in that
// repository (as src/sim/images.ts resolves it); nil when the registry has no such image.
func (c *catalog) resolve(ref string) *catalogImage {
	named, err := normalize(ref)
	if err != nil {
		return nil
	}
	if digested, ok := named.(reference.Digested); ok {
		for i := range c.file.Images {
			image := &c.file.Images[i]
			if image.Repository == named.Name() && image.Digest == digested.Digest().String() {
				return image
			}
		}
		return nil
	}
	return c.byName[named.String()]
}

// missingHere says whether this node's mirror lacks ref.
func (c *catalog) missingHere(ref string) bool {
	named, err := normalize(ref)
	return err == nil && c.missing[named.String()]
}

// scaled turns a duration in the simulator's milliseconds into wall time.
func (c *catalog) scaled(ms float64) time.Duration {
	return time.Duration(ms * c.file.TimeScale * float64(time.Millisecond))
}

func (c *catalog) pullTime(image *catalogImage) time.Duration {
	if image != nil && image.PullMs != nil {
		return c.scaled(*image.PullMs)
	}
	return c.scaled(c.file.Timing.PullMs)
}

// readyAfter is how long a container of ref runs before it is ready: zero unless the image is
// declared slow (a real kubelet, with no readiness probe, counts a running container ready).
func (c *catalog) readyAfter(ref string) time.Duration {
	image := c.resolve(ref)
	if image == nil || image.ReadyAfterMs == nil {
		return 0
	}
	return c.scaled(*image.ReadyAfterMs)
}
