//! The inventory as an SPDX 2.3 JSON document: one package a bundle (its version, its
//! `skill:<name>@<hash>` as an external reference, its source in `sourceInfo`, the verified
//! signer as `supplier`), each of its files a package of purpose `FILE` with its SHA-256 that the
//! bundle `CONTAINS` (SPDX file elements must carry a SHA-1, which the manifest does not record).
//! `creationInfo.created` is the recorded time of the described data ([`Inventory::recorded`],
//! or the `--timestamp` asked for); `documentNamespace` ends in a digest of the document without
//! it, so different content has a different namespace and the same content the same.

use serde_json::{Value, json};

use super::{Inventory, SbomBundle};

/// Where every document's namespace begins; a digest of its content follows.
pub const NAMESPACE: &str = "https://skillfold.invalid/spdx/";

/// The document.
pub fn document(inventory: &Inventory) -> Value {
    let mut packages = Vec::new();
    let mut relationships = Vec::new();
    for bundle in &inventory.bundles {
        let id = package_id(bundle);
        relationships.push(relationship("SPDXRef-DOCUMENT", "DESCRIBES", &id));
        packages.push(package(bundle, &id));
        for (index, file) in bundle.files.iter().enumerate() {
            let file_id = format!("{id}-file-{index}");
            relationships.push(relationship(&id, "CONTAINS", &file_id));
            packages.push(json!({
                "SPDXID": file_id,
                "name": file.path,
                "downloadLocation": "NOASSERTION",
                "filesAnalyzed": false,
                "primaryPackagePurpose": "FILE",
                "checksums": [{ "algorithm": "SHA256", "checksumValue": file.sha256 }],
                "comment": format!("{} bytes, file of {}", file.size, bundle.reference()),
            }));
        }
    }
    let created = inventory.timestamp.as_ref().unwrap_or(&inventory.recorded);
    let body = json!({
        "creationInfo": {
            "created": created,
            "creators": [format!("Tool: skillfold-{}", env!("CARGO_PKG_VERSION"))],
        },
        "packages": packages,
        "relationships": relationships,
    });
    let digest = super::digest_of(body.to_string().as_bytes());
    let mut doc = json!({
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": "skillfold-bundles",
        "documentNamespace": format!("{NAMESPACE}{digest}"),
    });
    if let (Some(doc), Value::Object(body)) = (doc.as_object_mut(), body) {
        doc.extend(body);
    }
    doc
}

/// `SPDXRef-skill-<name>-<hash>`: a skill name is letters, digits and hyphens.
fn package_id(bundle: &SbomBundle) -> String {
    format!("SPDXRef-skill-{}-{}", bundle.name, bundle.hash)
}

fn package(bundle: &SbomBundle, id: &str) -> Value {
    let mut p = serde_json::Map::new();
    p.insert("SPDXID".into(), json!(id));
    p.insert("name".into(), json!(bundle.name));
    p.insert("versionInfo".into(), json!(bundle.version));
    if let Some(signer) = &bundle.signer {
        p.insert(
            "supplier".into(),
            json!(format!("Organization: {}", one_line(signer))),
        );
    }
    p.insert("downloadLocation".into(), json!(download_location(bundle)));
    p.insert("filesAnalyzed".into(), json!(false));
    let mut source = format!("{} source", bundle.kind);
    if let Some(url) = &bundle.url {
        source.push_str(&format!(" {url}"));
    }
    if let Some(commit) = &bundle.commit {
        let what = if bundle.kind == "oci" {
            "manifest digest"
        } else {
            "commit"
        };
        source.push_str(&format!(", {what} {commit}"));
    }
    if let Some(path) = &bundle.path {
        source.push_str(&format!(", folder {path}"));
    }
    p.insert("sourceInfo".into(), json!(source));
    p.insert(
        "externalRefs".into(),
        json!([{
            "referenceCategory": "OTHER",
            "referenceType": "skillfold-bundle",
            "referenceLocator": bundle.reference(),
            "comment": "the chamvi-skill-bundle-v1 digest of the bundle",
        }]),
    );
    p.insert("primaryPackagePurpose".into(), json!("SOURCE"));
    // Each recorded verdict for this hash, as a review by the scanner (a tool) at its time.
    if !bundle.scans.is_empty() {
        let reviews: Vec<Value> = bundle
            .scans
            .iter()
            .map(|scan| {
                json!({
                    "annotationType": "REVIEW",
                    "annotator": format!("Tool: {}", scan.scanner),
                    "annotationDate": scan.at,
                    "comment": format!(
                        "verdict {} by scanner {} ({}) for bundle {}: {}",
                        scan.verdict.as_str(),
                        scan.scanner,
                        scan.digest,
                        scan.hash,
                        one_line(&scan.summary)
                    ),
                })
            })
            .collect();
        p.insert("annotations".into(), json!(reviews));
    }
    Value::Object(p)
}

/// `git+URL@COMMIT` for a Git repository reached over HTTP(S) or SSH at a domain name (the
/// specification's download location reads no IP address, no `localhost`, no file path), else
/// `NOASSERTION`; `sourceInfo` names the source either way.
fn download_location(bundle: &SbomBundle) -> String {
    match (&bundle.url, &bundle.commit, bundle.kind.as_str()) {
        (Some(url), Some(commit), "git") if at_a_domain(url) => format!("git+{url}@{commit}"),
        _ => "NOASSERTION".to_owned(),
    }
}

/// Whether `url` is `http://`, `https://` or `ssh://` to a host whose last label is 2 to 5
/// letters, without white space.
fn at_a_domain(url: &str) -> bool {
    let Some(rest) = ["https://", "http://", "ssh://"]
        .iter()
        .find_map(|scheme| url.strip_prefix(scheme))
    else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = host.split(':').next().unwrap_or_default();
    let top = host.rsplit('.').next().unwrap_or_default();
    host.contains('.')
        && (2..=5).contains(&top.len())
        && top.chars().all(|c| c.is_ascii_alphabetic())
        && !url.contains(char::is_whitespace)
}

/// `text` with line breaks and parentheses (which a supplier's syntax reads) made spaces.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r', '(', ')'], " ")
}

fn relationship(from: &str, kind: &str, to: &str) -> Value {
    json!({
        "spdxElementId": from,
        "relationshipType": kind,
        "relatedSpdxElement": to,
    })
}

#[cfg(test)]
mod tests {
    use super::at_a_domain;

    #[test]
    fn only_a_url_at_a_domain_is_a_download_location() {
        assert!(at_a_domain("https://github.com/acme/skills.git"));
        assert!(at_a_domain("ssh://git@git.example.org:2222/skills"));
        assert!(!at_a_domain("http://127.0.0.1:8080/skills.git"));
        assert!(!at_a_domain("https://localhost/skills.git"));
        assert!(!at_a_domain("/srv/git/skills.git"));
        assert!(!at_a_domain("https://example.com/a b"));
    }
}
