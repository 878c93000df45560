// Pod IP addresses, handed out per node from the node's spec.podCIDR, as a CNI plugin would.

function ipToInt(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function intToIp(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

export class PodIpam {
  private readonly next = new Map<string, number>();

  /** The next address of `cidr` (e.g. `10.244.1.0/24`) for `node`, skipping network and broadcast; wraps when full. */
  allocate(node: string, cidr: string | undefined): string {
    const [base, lenText] = (cidr ?? '10.244.0.0/16').split('/');
    const len = Number(lenText ?? 24);
    const size = 2 ** (32 - len);
    const start = ipToInt(base ?? '10.244.0.0');
    const i = this.next.get(node) ?? 1;
    this.next.set(node, i + 1 >= size - 1 ? 1 : i + 1);
    return intToIp(start + i);
  }
}
