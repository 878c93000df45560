// The simulated cluster's PKI: a CA made at start and a serving certificate it signs for the
// loopback names, so clients verify the server with the CA from the kubeconfig, as with a real
// cluster (no "insecure-skip-tls-verify").
import { generate } from 'selfsigned';

export interface ServingCerts {
  caPem: string;
  certPem: string;
  keyPem: string;
}

export async function makeServingCerts(now: Date = new Date()): Promise<ServingCerts> {
  // A day back, as a cluster's certificates are older than its clients' runs: a client whose clock
  // is minutes behind must not see a certificate "not yet valid".
  const notBeforeDate = new Date(now.getTime() - 24 * 3600_000);
  const notAfterDate = new Date(now.getTime() + 365 * 24 * 3600_000);
  const ca = await generate([{ name: 'commonName', value: 'kwave-sim-ca' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const server = await generate([{ name: 'commonName', value: 'kube-apiserver' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 2, value: 'kubernetes' },
          { type: 2, value: 'kubernetes.default.svc' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { caPem: ca.cert, certPem: server.cert, keyPem: server.private };
}
