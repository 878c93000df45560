// The command lines of the real components, as a kubeadm-style cluster runs them, from the file
// layout and ports of one control plane. Pure: paths and ports in, argument lists out.
import { join } from 'node:path';

export interface Layout {
  /** The control plane's temporary folder: certs, tokens, kubeconfigs, logs, etcd data. */
  dir: string;
  etcdClientPort: number;
  etcdPeerPort: number;
  apiserverPort: number;
  controllerManagerPort: number;
  schedulerPort: number;
  serviceClusterIpRange: string;
}

const ISSUER = 'https://kubernetes.default.svc.cluster.local';

export const paths = (dir: string) => ({
  certs: join(dir, 'pki'),
  ca: join(dir, 'pki', 'ca.crt'),
  caKey: join(dir, 'pki', 'ca.key'),
  servingCert: join(dir, 'pki', 'apiserver.crt'),
  servingKey: join(dir, 'pki', 'apiserver.key'),
  frontProxyCa: join(dir, 'pki', 'front-proxy-ca.crt'),
  frontProxyClientCert: join(dir, 'pki', 'front-proxy-client.crt'),
  frontProxyClientKey: join(dir, 'pki', 'front-proxy-client.key'),
  saKey: join(dir, 'pki', 'sa.key'),
  saPub: join(dir, 'pki', 'sa.pub'),
  tokens: join(dir, 'tokens.csv'),
  auditPolicy: join(dir, 'audit-policy.yaml'),
  auditLog: join(dir, 'audit.log'),
  etcdData: join(dir, 'etcd'),
  controllerManagerKubeconfig: join(dir, 'controller-manager.kubeconfig'),
  schedulerKubeconfig: join(dir, 'scheduler.kubeconfig'),
  log: (component: string) => join(dir, `${component}.log`),
});

/**
 * Every request once, at Metadata level (user, verb, resource, subresource, namespace, code; no
 * bodies). RequestReceived is left out so a request is one line, or two for a long-running one
 * (a watch: ResponseStarted when it opens, ResponseComplete when it ends).
 */
export const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
`;

export function etcdArgs(l: Layout): string[] {
  return [
    '--data-dir',
    paths(l.dir).etcdData,
    '--client-port',
    String(l.etcdClientPort),
    '--peer-port',
    String(l.etcdPeerPort),
  ];
}

export function apiserverArgs(l: Layout): string[] {
  const p = paths(l.dir);
  return [
    `--etcd-servers=http://127.0.0.1:${l.etcdClientPort}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${l.apiserverPort}`,
    `--tls-cert-file=${p.servingCert}`,
    `--tls-private-key-file=${p.servingKey}`,
    `--client-ca-file=${p.ca}`,
    '--authorization-mode=Node,RBAC',
    `--token-auth-file=${p.tokens}`,
    `--service-account-issuer=${ISSUER}`,
    `--service-account-key-file=${p.saPub}`,
    `--service-account-signing-key-file=${p.saKey}`,
    `--service-cluster-ip-range=${l.serviceClusterIpRange}`,
    // The aggregation layer's request-header authentication, as kubeadm sets it up; the
    // controller-manager and scheduler read this CA to authenticate delegated requests.
    `--requestheader-client-ca-file=${p.frontProxyCa}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${p.frontProxyClientCert}`,
    `--proxy-client-key-file=${p.frontProxyClientKey}`,
    // A loopback address may not be an Endpoints address, so the default reconciler fails every
    // 10 s on 127.0.0.1: nothing runs inside this cluster to use the kubernetes Service anyway.
    '--endpoint-reconciler-type=none',
    `--audit-policy-file=${p.auditPolicy}`,
    `--audit-log-path=${p.auditLog}`,
    '--audit-log-format=json',
    // blocking (the log backend's default, stated): each event is written before the response
    // completes, so a test reads its own request right after it; batch would buffer.
    '--audit-log-mode=blocking',
    // Never rotated: /sim/stats reads this one file as it grows. 0 is not "unlimited" but the log
    // library's default, 100 MB, which a 10,000-pod bench passes mid-run, and the rotated part
    // would be lost to the counts. So a size no run reaches, in MB.
    '--audit-log-maxbackup=0',
    '--audit-log-maxsize=1048576',
    '--allow-privileged=true',
    // Admission plugins stay at their defaults (no --enable-admission-plugins), priority and
    // fairness stays on with its default seats (400 + 200), as on a real cluster.
    '--v=0',
  ];
}

export function controllerManagerArgs(l: Layout): string[] {
  const p = paths(l.dir);
  const kubeconfig = p.controllerManagerKubeconfig;
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${l.controllerManagerPort}`,
    `--cert-dir=${join(l.dir, 'controller-manager-certs')}`,
    '--leader-elect=false',
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${p.saKey}`,
    `--root-ca-file=${p.ca}`,
    `--cluster-signing-cert-file=${p.ca}`,
    `--cluster-signing-key-file=${p.caKey}`,
    `--service-cluster-ip-range=${l.serviceClusterIpRange}`,
    // Every default controller, node-lifecycle (NotReady taints, evictions) included. Not naming
    // the cloud provider's three: 1.33 skips them without a cloud provider, and later releases no
    // longer know their names (naming one there is refused at start).
    '--controllers=*',
    '--v=0',
  ];
}

export function schedulerArgs(l: Layout): string[] {
  const kubeconfig = paths(l.dir).schedulerKubeconfig;
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${l.schedulerPort}`,
    `--cert-dir=${join(l.dir, 'scheduler-certs')}`,
    '--leader-elect=false',
    '--v=0',
  ];
}
