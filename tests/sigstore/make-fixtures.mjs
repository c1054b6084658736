// Keyless Sigstore signatures over a container image, made by real implementations for
// skillfold's tests: sigstore-js (npm `sigstore`) signs, with @sigstore/mock's Fulcio CA and
// Rekor log served on 127.0.0.1 by this script; sigstore-js's verifier (@sigstore/verify) then
// gives its verdict on every file written, with the trusted root written beside them.
//
// Usage: node make-fixtures.mjs --digest sha256:HEX --reference REF --issuer URL --subject URI
//                               --out DIR
// Writes into DIR:
//   trusted_root.json         the protobuf-JSON trusted root: the mock Fulcio CA (its root
//                             certificate) and the mock Rekor log key, each with a validFor
//                             window starting an hour before signing; a CT log key (the
//                             certificates carry SCTs; sigstore-js checks them)
//   payload.json              the cosign simple-signing payload for REF and DIGEST, the bytes
//                             that are signed (as skillfold's `simple_signing::payload` writes)
//   message.bundle.json       a v0.3 message-signature bundle over payload.json (hashedrekord
//                             entry, the leaf in `certificate`), as cosign v3 would carry it
//   message.v02.bundle.json   the same signature as sigstore-js writes it (v0.2 bundle, the leaf
//                             in `x509CertificateChain`)
//   cosign-v2.json            the same signature as cosign <= v2's annotations:
//                             {"payload": STRING, "annotations": {signature, certificate, chain,
//                             bundle}}
//   dsse.bundle.json          a v0.3 DSSE bundle (dsse entry) of the in-toto statement cosign v3's
//                             `sign` writes: subject [{digest: {sha256: HEX}, annotations: {}}],
//                             predicateType https://sigstore.dev/cosign/sign/v1, predicate {}
//   statement.json            that statement's bytes
//   VARIANT/...               the same four signature files (message.bundle.json,
//                             message.v02.bundle.json, cosign-v2.json, dsse.bundle.json) for each
//                             variant below, all over the same payload
//   trusted_root.ca-ended.json, trusted_root.log-ended.json
//                             the trusted root with the CA's (the log's) validFor ended one
//                             second before the signing time
//   oracle.json               sigstore-js's verdict on each signature file with trusted_root.json
//                             (and on the main ones with the two ended roots): {"FILE":
//                             {"accepted": bool, "error": STRING?}}, with the policy
//                             {issuer, subject} given on the command line
//   meta.json                 {digest, reference, issuer, subject, signed_at (Unix seconds),
//                             tools: {package: version}}
// Variants:
//   other-subject/   signed by the same CA and log for SUBJECT + "-other"       (refused: identity)
//   other-issuer/    signed for ISSUER + "/other"                               (refused: identity)
//   other-ca/        the leaf from a second mock CA, not in the trusted root    (refused)
//   other-log/       the entry from a second mock log, not in the trusted root  (refused)
//   expired/         the leaf issued an hour before the signing time (valid 10 minutes), by a
//                    CA with the trusted CA's key and name                      (refused)
//   legacy-issuer/   the leaf names its issuer only in the legacy extension 1.3.6.1.4.1.57264.1.1
//                    (accepted by sigstore-js)
//   no-issuer/       the leaf names no issuer                                   (refused)
// The script exits non-zero when a verdict differs from the one expected above.

import { execFileSync } from "node:child_process";
import { createHash, createPrivateKey, createPublicKey, X509Certificate } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { fulcioHandler, initializeCA, initializeCTLog, initializeTLog, rekorHandler } from "@sigstore/mock";
import { bundleFromJSON } from "@sigstore/bundle";
import { TrustedRoot } from "@sigstore/protobuf-specs";
import { toSignedEntity, toTrustMaterial, Verifier } from "@sigstore/verify";
import { attest, sign } from "sigstore";

const FULCIO_ISSUER_V1 = "1.3.6.1.4.1.57264.1.1";
const FULCIO_ISSUER_V2 = "1.3.6.1.4.1.57264.1.8";
const TRUSTED_ROOT_MEDIA_TYPE = "application/vnd.dev.sigstore.trustedroot+json;version=0.1";
const BUNDLE_V03_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json";
const COSIGN_SIGN_PREDICATE = "https://sigstore.dev/cosign/sign/v1";
const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";
const TRUSTED_LOG_URL = "https://rekor.sigstore.mock";

function options(argv) {
  const wanted = ["digest", "reference", "issuer", "subject", "out"];
  const given = {};
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i].replace(/^--/, "");
    if (!wanted.includes(name) || i + 1 >= argv.length) {
      throw new Error(`usage: make-fixtures.mjs ${wanted.map((w) => `--${w} VALUE`).join(" ")}`);
    }
    given[name] = argv[i + 1];
  }
  for (const name of wanted) {
    if (given[name] === undefined) throw new Error(`--${name} is required`);
  }
  if (!/^sha256:[0-9a-f]{64}$/.test(given.digest)) throw new Error("--digest must be sha256:<64 hex>");
  return given;
}

// Keys are made by the openssl CLI, not node's key generation (see tests/oidc/provider.mjs:
// node 20 can deadlock finalizing a key generation job).
function newKeyPair() {
  const pem = execFileSync("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], {
    encoding: "utf8",
  });
  const privateKey = createPrivateKey(pem);
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

// The cosign simple-signing payload, byte for byte as skillfold writes it.
function simpleSigningPayload(reference, digest) {
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { "docker-reference": reference },
        image: { "docker-manifest-digest": digest },
        type: "cosign container image signature",
      },
      optional: null,
    }),
  );
}

// The in-toto statement cosign v3's `sign` signs (protojson of in-toto's Statement, compact).
function cosignStatement(digest) {
  const [algorithm, hex] = digest.split(":");
  return Buffer.from(
    JSON.stringify({
      _type: "https://in-toto.io/Statement/v1",
      subject: [{ digest: { [algorithm]: hex }, annotations: {} }],
      predicateType: COSIGN_SIGN_PREDICATE,
      predicate: {},
    }),
  );
}

// An unsigned JWT: the mock Fulcio reads its claims without checking a signature.
function identityToken(issuer, subject) {
  const part = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part({ iss: issuer, sub: subject })}.unsigned`;
}

// One HTTP server on 127.0.0.1 for every mock service: /fulcio/NAME/... and /rekor/NAME/....
async function serve(routes) {
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", async () => {
      const handler = request.method === "POST" ? routes.get(request.url) : undefined;
      if (!handler) {
        response.writeHead(404).end();
        return;
      }
      const { statusCode, response: body, contentType } = await handler(Buffer.concat(chunks).toString("utf8"));
      response.writeHead(statusCode, { "Content-Type": contentType || "text/plain" }).end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

// A CA that drops or keeps the issuer extensions of what the mock Fulcio asks it to issue.
function withIssuerExtensions(ca, keep) {
  return {
    rootCertificate: ca.rootCertificate,
    issueCertificate: (request) =>
      ca.issueCertificate({
        ...request,
        extensions: (request.extensions || []).filter(
          (extension) => ![FULCIO_ISSUER_V1, FULCIO_ISSUER_V2].includes(extension.oid) || keep.includes(extension.oid),
        ),
      }),
  };
}

// The mock Rekor logs a proposed entry as it comes; Rekor canonicalizes it first, which
// verifiers rely on (sigstore-python rebuilds the body it expects and compares): the verifier's
// PEM re-encoded (64-column lines), and a `dsse` entry (v0.0.1) stored as the envelope's and
// payload's hashes and the signatures with their verifiers. Made so here.
function asRekorStores(handler) {
  return (body) => {
    const proposed = JSON.parse(body);
    const canonicalPem = (base64Pem) =>
      Buffer.from(pem(new X509Certificate(Buffer.from(base64Pem, "base64")).raw)).toString("base64");
    if (proposed.kind === "hashedrekord") {
      const key = proposed.spec.signature.publicKey;
      key.content = canonicalPem(key.content);
      return handler(JSON.stringify(proposed));
    }
    if (proposed.kind !== "dsse") return handler(body);
    const content = proposed.spec.proposedContent;
    const envelope = JSON.parse(content.envelope);
    const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
    return handler(
      JSON.stringify({
        apiVersion: proposed.apiVersion,
        kind: "dsse",
        spec: {
          envelopeHash: { algorithm: "sha256", value: sha256(content.envelope) },
          payloadHash: { algorithm: "sha256", value: sha256(Buffer.from(envelope.payload, "base64")) },
          signatures: envelope.signatures.map((signature, index) => ({
            signature: signature.sig,
            verifier: canonicalPem(content.verifiers[index]),
          })),
        },
      }),
    );
  };
}

// Protobuf JSON leaves out a field at its default value: sigstore-js writes no `logIndex` for
// the mock's proof of index 0 and no empty `hashes`. sigstore-python requires both: written out
// (the same message).
function withExplicitProof(bundle) {
  for (const entry of bundle.verificationMaterial.tlogEntries) {
    if (entry.inclusionProof) {
      entry.inclusionProof = { logIndex: "0", hashes: [], ...entry.inclusionProof };
    }
  }
  return bundle;
}

function pem(der) {
  const lines = Buffer.from(der).toString("base64").match(/.{1,64}/g);
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}

function rfc3339(seconds) {
  return new Date(seconds * 1000).toISOString().replace(/\.000Z$/, "Z");
}

// The v0.3 form of sigstore-js's v0.2 message bundle: the leaf alone in `certificate`.
function asV03(bundle) {
  const { x509CertificateChain, ...material } = bundle.verificationMaterial;
  return {
    ...bundle,
    mediaType: BUNDLE_V03_MEDIA_TYPE,
    verificationMaterial: { certificate: x509CertificateChain.certificates[0], ...material },
  };
}

// cosign <= v2's annotations for the same signature: the Rekor entry as its `RekorBundle`.
function asCosignV2(bundle, payload, chain) {
  const entry = bundle.verificationMaterial.tlogEntries[0];
  const leaf = Buffer.from(bundle.verificationMaterial.x509CertificateChain.certificates[0].rawBytes, "base64");
  const rekorBundle = {
    SignedEntryTimestamp: entry.inclusionPromise.signedEntryTimestamp,
    Payload: {
      body: entry.canonicalizedBody,
      integratedTime: Number(entry.integratedTime),
      logIndex: Number(entry.logIndex),
      logID: Buffer.from(entry.logId.keyId, "base64").toString("hex"),
    },
  };
  return {
    payload: payload.toString("utf8"),
    annotations: {
      "dev.cosignproject.cosign/signature": bundle.messageSignature.signature,
      "dev.sigstore.cosign/certificate": pem(leaf),
      "dev.sigstore.cosign/chain": chain.map(pem).join(""),
      "dev.sigstore.cosign/bundle": JSON.stringify(rekorBundle),
    },
  };
}

// The cosign v2 annotations as a bundle sigstore-js can verify (v0.1 layout: a SET, no proof).
function cosignV2AsBundle(cosign) {
  const annotations = cosign.annotations;
  const rekor = JSON.parse(annotations["dev.sigstore.cosign/bundle"]);
  const leaf = new X509Certificate(annotations["dev.sigstore.cosign/certificate"]).raw;
  return {
    mediaType: "application/vnd.dev.sigstore.bundle+json;version=0.1",
    verificationMaterial: {
      x509CertificateChain: { certificates: [{ rawBytes: leaf.toString("base64") }] },
      tlogEntries: [
        {
          logIndex: String(rekor.Payload.logIndex),
          logId: { keyId: Buffer.from(rekor.Payload.logID, "hex").toString("base64") },
          kindVersion: { kind: "hashedrekord", version: "0.0.1" },
          integratedTime: String(rekor.Payload.integratedTime),
          inclusionPromise: { signedEntryTimestamp: rekor.SignedEntryTimestamp },
          canonicalizedBody: rekor.Payload.body,
        },
      ],
    },
    messageSignature: {
      messageDigest: {
        algorithm: "SHA2_256",
        digest: createHash("sha256").update(cosign.payload).digest("base64"),
      },
      signature: annotations["dev.cosignproject.cosign/signature"],
    },
  };
}

function trustedRoot({ ca, tlog, ctlog, from, caUntil, logUntil }) {
  const window = (until) => ({ start: rfc3339(from), ...(until === undefined ? {} : { end: rfc3339(until) }) });
  return {
    mediaType: TRUSTED_ROOT_MEDIA_TYPE,
    tlogs: [
      {
        baseUrl: TRUSTED_LOG_URL,
        hashAlgorithm: "SHA2_256",
        publicKey: {
          rawBytes: Buffer.from(tlog.publicKey).toString("base64"),
          keyDetails: "PKIX_ECDSA_P256_SHA_256",
          validFor: window(logUntil),
        },
        logId: { keyId: createHash("sha256").update(tlog.publicKey).digest("base64") },
      },
    ],
    certificateAuthorities: [
      {
        subject: { organization: "sigstore.mock", commonName: "sigstore" },
        uri: "https://fulcio.sigstore.mock",
        certChain: { certificates: [{ rawBytes: Buffer.from(ca.rootCertificate).toString("base64") }] },
        validFor: window(caUntil),
      },
    ],
    ctlogs: [
      {
        baseUrl: "https://ctfe.sigstore.mock",
        hashAlgorithm: "SHA2_256",
        publicKey: {
          rawBytes: Buffer.from(ctlog.publicKey).toString("base64"),
          keyDetails: "PKIX_ECDSA_P256_SHA_256",
          validFor: window(),
        },
        logId: { keyId: Buffer.from(ctlog.logID).toString("base64") },
      },
    ],
    timestampAuthorities: [],
  };
}

function verdict(rootJSON, bundleJSON, data, policy) {
  try {
    const verifier = new Verifier(toTrustMaterial(TrustedRoot.fromJSON(rootJSON)), {
      tlogThreshold: 1,
      ctlogThreshold: 1,
    });
    verifier.verify(toSignedEntity(bundleFromJSON(bundleJSON), data), policy);
    return { accepted: true };
  } catch (error) {
    return { accepted: false, error: `${error.code ? `${error.code}: ` : ""}${error.message}` };
  }
}

function version(name) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return JSON.parse(readFileSync(path.join(here, "node_modules", name, "package.json"), "utf8")).version;
}

async function main() {
  const given = options(process.argv.slice(2));
  mkdirSync(given.out, { recursive: true });

  const caKeys = newKeyPair();
  const ctlog = await initializeCTLog(newKeyPair());
  const ca = await initializeCA(caKeys, ctlog);
  const otherCA = await initializeCA(newKeyPair(), ctlog);
  const signedAt = Math.floor(Date.now() / 1000);
  // A CA with the trusted CA's key and name whose clock is an hour behind: its leaves chain to
  // the trusted root certificate but expired 50 minutes before the signing time.
  const lateCA = await initializeCA(caKeys, ctlog, new Date((signedAt - 3600) * 1000));

  const routes = new Map();
  const fulcio = (name, authority) => {
    routes.set(`/fulcio/${name}/api/v2/signingCert`, fulcioHandler(authority, { subjectClaim: "sub" }).fn);
  };
  fulcio("trusted", ca);
  fulcio("other", otherCA);
  fulcio("late", lateCA);
  fulcio("legacy-issuer", withIssuerExtensions(ca, [FULCIO_ISSUER_V1]));
  fulcio("no-issuer", withIssuerExtensions(ca, []));
  const server = await serve(routes);
  const base = `http://127.0.0.1:${server.address().port}`;
  // The checkpoint's signer name is the log's host, which sigstore-js finds in the log's baseUrl.
  const tlog = await initializeTLog(TRUSTED_LOG_URL, newKeyPair());
  const otherTLog = await initializeTLog("https://rekor-other.sigstore.mock", newKeyPair());
  routes.set("/rekor/trusted/api/v1/log/entries", asRekorStores(rekorHandler(tlog).fn));
  routes.set("/rekor/other/api/v1/log/entries", asRekorStores(rekorHandler(otherTLog).fn));

  const root = trustedRoot({ ca, tlog, ctlog, from: signedAt - 3600 });
  const payload = simpleSigningPayload(given.reference, given.digest);
  const statement = cosignStatement(given.digest);
  const write = (name, value) => {
    mkdirSync(path.dirname(path.join(given.out, name)), { recursive: true });
    writeFileSync(path.join(given.out, name), typeof value === "string" || Buffer.isBuffer(value) ? value : `${JSON.stringify(value, null, 2)}\n`);
  };
  write("trusted_root.json", root);
  write("trusted_root.ca-ended.json", trustedRoot({ ca, tlog, ctlog, from: signedAt - 3600, caUntil: signedAt - 1 }));
  write("trusted_root.log-ended.json", trustedRoot({ ca, tlog, ctlog, from: signedAt - 3600, logUntil: signedAt - 1 }));
  write("payload.json", payload);
  write("statement.json", statement);

  const variants = [
    { dir: "", fulcio: "trusted", rekor: "trusted", accepted: true },
    { dir: "other-subject/", subject: `${given.subject}-other`, accepted: false },
    { dir: "other-issuer/", issuer: `${given.issuer}/other`, accepted: false },
    { dir: "other-ca/", fulcio: "other", accepted: false },
    { dir: "other-log/", rekor: "other", accepted: false },
    { dir: "expired/", fulcio: "late", accepted: false },
    { dir: "legacy-issuer/", fulcio: "legacy-issuer", accepted: true },
    { dir: "no-issuer/", fulcio: "no-issuer", accepted: false },
  ];
  // sigstore-js reads a SAN given as a string as an unanchored pattern: anchored here, so the
  // policy is exact equality as skillfold's.
  const exactly = new RegExp(`^${given.subject.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
  const policy = { subjectAlternativeName: exactly, extensions: { issuer: given.issuer } };
  const oracle = {};
  const surprises = [];
  const judge = (name, rootJSON, bundleJSON, data, expected) => {
    oracle[name] = verdict(rootJSON, bundleJSON, data, policy);
    if (oracle[name].accepted !== expected) surprises.push(`${name}: ${JSON.stringify(oracle[name])}`);
  };
  for (const variant of variants) {
    const signOptions = {
      fulcioURL: `${base}/fulcio/${variant.fulcio || "trusted"}`,
      rekorURL: `${base}/rekor/${variant.rekor || "trusted"}`,
      identityToken: identityToken(variant.issuer || given.issuer, variant.subject || given.subject),
      retry: 0,
      timeout: 5000,
    };
    const v02 = withExplicitProof(await sign(payload, signOptions));
    const v03 = asV03(v02);
    const chain = [variant.fulcio === "other" ? otherCA.rootCertificate : ca.rootCertificate];
    const cosign = asCosignV2(v02, payload, chain);
    const dsse = withExplicitProof(await attest(statement, IN_TOTO_PAYLOAD_TYPE, signOptions));
    write(`${variant.dir}message.v02.bundle.json`, v02);
    write(`${variant.dir}message.bundle.json`, v03);
    write(`${variant.dir}cosign-v2.json`, cosign);
    write(`${variant.dir}dsse.bundle.json`, dsse);
    judge(`${variant.dir}message.v02.bundle.json`, root, v02, payload, variant.accepted);
    judge(`${variant.dir}message.bundle.json`, root, v03, payload, variant.accepted);
    judge(`${variant.dir}cosign-v2.json`, root, cosignV2AsBundle(cosign), payload, variant.accepted);
    judge(`${variant.dir}dsse.bundle.json`, root, dsse, undefined, variant.accepted);
    if (variant.dir === "") {
      for (const ended of ["trusted_root.ca-ended.json", "trusted_root.log-ended.json"]) {
        const endedRoot = JSON.parse(readFileSync(path.join(given.out, ended), "utf8"));
        judge(`${ended} + message.bundle.json`, endedRoot, v03, payload, false);
        judge(`${ended} + dsse.bundle.json`, endedRoot, dsse, undefined, false);
      }
    }
  }
  server.close();

  write("oracle.json", oracle);
  write("meta.json", {
    digest: given.digest,
    reference: given.reference,
    issuer: given.issuer,
    subject: given.subject,
    signed_at: signedAt,
    tools: Object.fromEntries(
      ["sigstore", "@sigstore/mock", "@sigstore/sign", "@sigstore/verify", "@sigstore/bundle"].map((name) => [
        name,
        version(name),
      ]),
    ),
  });
  if (surprises.length > 0) {
    throw new Error(`sigstore-js's verdicts differ from the expected ones:\n${surprises.join("\n")}`);
  }
}

main().catch((error) => {
  console.error(error.stack || String(error));
  process.exit(1);
});
