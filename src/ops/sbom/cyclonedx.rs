//! The inventory as a CycloneDX 1.6 JSON document: one component of type `file` a bundle
//! (`bom-ref` `skill:<name>@<hash>`, the bundle digest and source as properties, a `vcs`
//! external reference for a Git repository, the verified signer as `publisher`), each of its
//! files a nested `file` component with its SHA-256. The `serialNumber` is a UUID taken from a
//! digest of the document without it; `metadata.timestamp` is written only when asked for.

use serde_json::{Value, json};

use super::{Inventory, SbomBundle};

/// The document.
pub fn document(inventory: &Inventory) -> Value {
    let components: Vec<Value> = inventory.bundles.iter().map(component).collect();
    let mut metadata = serde_json::Map::new();
    if let Some(time) = &inventory.timestamp {
        metadata.insert("timestamp".into(), json!(time));
    }
    metadata.insert(
        "tools".into(),
        json!({ "components": [{
            "type": "application",
            "name": "skillfold",
            "version": env!("CARGO_PKG_VERSION"),
        }] }),
    );
    let mut doc = json!({
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "version": 1,
        "metadata": metadata,
        "components": components,
    });
    let digest = super::digest_of(doc.to_string().as_bytes());
    let mut ordered = serde_json::Map::new();
    for (key, value) in doc.as_object_mut().map(std::mem::take).unwrap_or_default() {
        ordered.insert(key.clone(), value);
        if key == "specVersion" {
            ordered.insert("serialNumber".into(), json!(uuid_of(&digest)));
        }
    }
    Value::Object(ordered)
}

/// `urn:uuid:` and the first 128 bits of `digest` (hex), shaped as a name-based UUID (version 5
/// bits, RFC 4122 variant).
fn uuid_of(digest: &str) -> String {
    let hex = &digest[..32];
    let version = format!("5{}", &hex[13..16]);
    let variant = u8::from_str_radix(&hex[16..17], 16).unwrap_or(0) & 0x3 | 0x8;
    format!(
        "urn:uuid:{}-{}-{}-{variant:x}{}-{}",
        &hex[..8],
        &hex[8..12],
        version,
        &hex[17..20],
        &hex[20..32]
    )
}

fn component(bundle: &SbomBundle) -> Value {
    let reference = bundle.reference();
    let mut properties = vec![
        property("skillfold:bundle-digest", &bundle.hash),
        property("skillfold:source-kind", &bundle.kind),
    ];
    if let Some(url) = &bundle.url {
        properties.push(property("skillfold:source-url", url));
    }
    if let Some(commit) = &bundle.commit {
        let name = if bundle.kind == "oci" {
            "skillfold:manifest-digest"
        } else {
            "skillfold:commit"
        };
        properties.push(property(name, commit));
    }
    if let Some(path) = &bundle.path {
        properties.push(property("skillfold:path", path));
    }
    // Each recorded verdict for this hash: `skillfold:scan:<scanner>:<field>`.
    for scan in &bundle.scans {
        let prefix = format!("skillfold:scan:{}", scan.scanner);
        for (field, value) in [
            ("verdict", scan.verdict.as_str()),
            ("scanner-digest", scan.digest.as_str()),
            ("at", scan.at.as_str()),
            ("summary", scan.summary.as_str()),
        ] {
            properties.push(property(&format!("{prefix}:{field}"), value));
        }
    }
    let files: Vec<Value> = bundle
        .files
        .iter()
        .map(|f| {
            json!({
                "type": "file",
                "bom-ref": format!("{reference}/{}", f.path),
                "name": f.path,
                "hashes": [{ "alg": "SHA-256", "content": f.sha256 }],
                "properties": [property("skillfold:size", &f.size.to_string())],
            })
        })
        .collect();
    let mut c = serde_json::Map::new();
    c.insert("type".into(), json!("file"));
    c.insert("bom-ref".into(), json!(reference));
    if let Some(signer) = &bundle.signer {
        c.insert("publisher".into(), json!(signer));
    }
    c.insert("name".into(), json!(bundle.name));
    c.insert("version".into(), json!(bundle.version));
    if let (Some(url), "git") = (&bundle.url, bundle.kind.as_str()) {
        let mut vcs = json!({ "type": "vcs", "url": url });
        if let Some(commit) = &bundle.commit {
            vcs["comment"] = json!(format!("commit {commit}"));
        }
        c.insert("externalReferences".into(), json!([vcs]));
    }
    c.insert("properties".into(), json!(properties));
    c.insert("components".into(), json!(files));
    Value::Object(c)
}

fn property(name: &str, value: &str) -> Value {
    json!({ "name": name, "value": value })
}
