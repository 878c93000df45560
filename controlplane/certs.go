package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// runCerts writes what a fresh cluster needs in --dir, laid out as kubeadm lays it out:
//   - ca.crt/ca.key: the cluster CA (it also signs CSRs in the controller-manager);
//   - apiserver.crt/key: the apiserver's serving pair, for loopback and the in-cluster names;
//   - front-proxy-ca.crt and front-proxy-client.crt/key: the aggregation layer's request-header
//     CA and the apiserver's client pair for it (components read the CA from the
//     extension-apiserver-authentication ConfigMap to authenticate delegated requests);
//   - sa.key/sa.pub: the service-account signing pair behind TokenRequest and the token controller.
func runCerts(args []string) int {
	flags := flag.NewFlagSet("certs", flag.ContinueOnError)
	dir := flags.String("dir", "", "directory to write into (required)")
	serviceIP := flags.String("service-ip", "10.0.0.1", "the kubernetes Service's cluster IP")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "certs: --dir is required")
		return 2
	}
	if err := writeCerts(*dir, net.ParseIP(*serviceIP)); err != nil {
		fmt.Fprintf(os.Stderr, "certs: %v\n", err)
		return 1
	}
	return 0
}

type pair struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

const validity = 10 * 365 * 24 * time.Hour

// issue signs template with parent (or itself when parent is nil) for a new P-256 key.
func issue(template *x509.Certificate, parent *pair) (*pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	template.SerialNumber = serial
	template.NotBefore = time.Now().Add(-time.Hour)
	template.NotAfter = time.Now().Add(validity)
	signer, signerCert := crypto.Signer(key), template
	if parent != nil {
		signer, signerCert = parent.key, parent.cert
	}
	der, err := x509.CreateCertificate(rand.Reader, template, signerCert, &key.PublicKey, signer)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &pair{cert: cert, der: der, key: key}, nil
}

func caTemplate(name string) *x509.Certificate {
	return &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
}

func writeCerts(dir string, serviceIP net.IP) error {
	ca, err := issue(caTemplate("kubernetes"), nil)
	if err != nil {
		return err
	}
	serving, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, serviceIP},
	}, ca)
	if err != nil {
		return err
	}
	frontProxyCA, err := issue(caTemplate("front-proxy-ca"), nil)
	if err != nil {
		return err
	}
	frontProxyClient, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "front-proxy-client"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, frontProxyCA)
	if err != nil {
		return err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}

	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	write := func(name, kind string, der []byte) error {
		return os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
	}
	writePair := func(base string, p *pair) error {
		keyDER, err := x509.MarshalECPrivateKey(p.key)
		if err != nil {
			return err
		}
		if err := write(base+".crt", "CERTIFICATE", p.der); err != nil {
			return err
		}
		return write(base+".key", "EC PRIVATE KEY", keyDER)
	}
	for base, p := range map[string]*pair{"ca": ca, "apiserver": serving, "front-proxy-ca": frontProxyCA, "front-proxy-client": frontProxyClient} {
		if err := writePair(base, p); err != nil {
			return err
		}
	}
	if err := write("sa.key", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey)); err != nil {
		return err
	}
	return write("sa.pub", "PUBLIC KEY", saPub)
}
