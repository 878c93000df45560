// The kubelet's image cache of each node: which images are present, which its registry mirror
// lacks (the missingImages fault), and which caches changed since they were last reported.
import { parseImageRef, type ImageRef, type ImageTable } from '../images.js';
import { nodeImageList } from './nodeImages.js';
import type { KubeletPort } from './port.js';

export class NodeImageCaches {
  /** Images present on each node (normalized names). */
  private readonly present = new Map<string, Set<string>>();
  private readonly missing = new Map<string, Set<string>>();
  /** Nodes whose image cache changed since it was last reported. */
  private readonly changed = new Set<string>();

  /**
   * `missingImages`: per node name, images its registry mirror lacks (any spelling). `onAdded`
   * is called when an image is new to a node, for its report to be scheduled.
   */
  constructor(
    private readonly images: ImageTable,
    missingImages: Readonly<Record<string, readonly string[]>>,
    private readonly onAdded: () => void,
  ) {
    for (const [node, refs] of Object.entries(missingImages)) {
      const names = refs
        .map((i) => parseImageRef(i))
        .filter((r): r is ImageRef => !('error' in r))
        .map((r) => r.fullName);
      this.missing.set(node, new Set(names));
    }
  }

  imagesOn(node: string): Set<string> {
    let set = this.present.get(node);
    if (!set) this.present.set(node, (set = new Set()));
    return set;
  }

  /** Puts an image in a node's cache; a new one is reported in the node's status.images on the next turn. */
  add(node: string, fullName: string): void {
    const set = this.imagesOn(node);
    if (set.has(fullName)) return;
    set.add(fullName);
    this.changed.add(node);
    this.onAdded();
  }

  /** The node's registry mirror lacks this image: pulls of it fail there. */
  lacks(node: string, fullName: string): boolean {
    return this.missing.get(node)?.has(fullName) ?? false;
  }

  /** Whether the node's cache changed since it was last reported. */
  changedOn(node: string): boolean {
    return this.changed.has(node);
  }

  /**
   * Reports the caches that changed (status.images) through `port`, except on nodes `isDown`
   * says are cut off (reported once they are back); a failed report is tried again next time.
   */
  report(
    port: KubeletPort,
    isDown: (node: string) => boolean,
    onWriteError: (err: unknown, what: string) => void,
  ): void {
    for (const node of [...this.changed]) {
      if (isDown(node)) continue;
      this.changed.delete(node);
      const result = port.reportNodeImages(node, nodeImageList(this.imagesOn(node), this.images));
      if (result instanceof Promise) {
        result.catch((err: unknown) => {
          onWriteError(err, `node ${node}`);
          this.changed.add(node);
        });
      }
    }
  }
}
