//! Git servers on 127.0.0.1 that a test starts and stops: a smart-HTTP server (lighttpd +
//! `git http-backend`, over HTTP or HTTPS, with or without authentication, redirecting or
//! misbehaving as told) and a scripted server that answers each connection with given bytes.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::git::git;

/// lighttpd + `git http-backend` serving every bare repository under `root` at
/// `http://127.0.0.1:PORT/git/<name>.git`. Stopped on drop.
pub struct HttpServer {
    child: Child,
    pub port: u16,
    scheme: &'static str,
    state: tempfile::TempDir,
}

/// A redirect a [`HttpServer::redirecting`] answers: every request whose URL (path and query)
/// matches the regular expression `from` is answered `code` with `Location: to`, where `$1`… are
/// the groups of `from`.
pub struct Redirect {
    pub from: &'static str,
    pub to: String,
    pub code: u16,
    /// Answered only once the credentials were checked (the server's modules in that order).
    pub after_auth: bool,
}

/// How a [`HttpServer::serving`] serves: `git upload-pack`'s switches, and the faults of a
/// server that does not keep its word, made by the CGI wrapper from each request's body.
#[derive(Debug, Clone, Default)]
pub struct Serve {
    /// `uploadpack.allowFilter`: offer `filter` (partial fetches).
    pub allow_filter: bool,
    /// `uploadpack.allowAnySHA1InWant`: serve any object by id, also in protocol v0.
    pub allow_any_sha1: bool,
    /// `uploadpackfilter.blob:none.allow=false`: offer `filter`, but refuse `blob:none`.
    pub refuse_blob_none: bool,
    /// Speak protocol v0 whatever the client asks for (the `Git-Protocol` header dropped).
    pub v0: bool,
    /// Drop the client's `filter` line: offer partial fetches, then send every blob anyway.
    pub ignore_filter: bool,
    /// Apply this filter instead of the client's `blob:none` (`tree:1`: leave out every tree
    /// below the root tree too).
    pub filter_instead: Option<&'static str>,
    /// Drop the client's `want` of this object, when it asks for more than one: answer a
    /// request for several blobs without this one.
    pub omit_want: Option<String>,
    /// Add a `want` of this object to every request for blobs (no `deepen`): answer with more
    /// objects than were asked for.
    pub extra_want: Option<String>,
    /// Answer every request for a commit (with `deepen`) as if it wanted this one instead: a
    /// cache or proxy that mixes up its answers.
    pub answer_for: Option<String>,
    /// Refuse every request for objects that is not one for a commit (no `deepen`), as a
    /// server that serves no object by id but a commit answers: `ERR upload-pack: not our ref`.
    pub refuse_blob_wants: bool,
}

/// The user and password the `https_with_auth` server accepts.
pub const USER: &str = "alice";
pub const PASSWORD: &str = "s3cret-never-printed";

impl HttpServer {
    /// Plain HTTP, no authentication.
    pub fn start(root: &Path) -> HttpServer {
        HttpServer::spawn(root, false, false)
    }

    /// HTTPS with a throwaway CA (see [`HttpServer::ca_file`]) and HTTP basic authentication
    /// ([`USER`], [`PASSWORD`]).
    pub fn https_with_auth(root: &Path) -> HttpServer {
        HttpServer::spawn(root, true, true)
    }

    /// Plain HTTP with HTTP basic authentication ([`USER`], [`PASSWORD`]): credentials a client
    /// would have to send in clear text.
    pub fn http_with_auth(root: &Path) -> HttpServer {
        HttpServer::spawn(root, false, true)
    }

    /// Like [`HttpServer::start`] (or over HTTPS, with or without authentication), answering
    /// every request whose URL matches one of `redirects` with that redirect instead.
    pub fn redirecting(root: &Path, tls: bool, auth: bool, redirects: &[Redirect]) -> HttpServer {
        HttpServer::spawn_with(root, (tls, auth), redirects, &Serve::default())
    }

    /// Plain HTTP, no authentication, served as `serve` says.
    pub fn serving(root: &Path, serve: &Serve) -> HttpServer {
        HttpServer::spawn_with(root, (false, false), &[], serve)
    }

    fn spawn(root: &Path, tls: bool, auth: bool) -> HttpServer {
        HttpServer::spawn_with(root, (tls, auth), &[], &Serve::default())
    }

    fn spawn_with(
        root: &Path,
        (tls, auth): (bool, bool),
        redirects: &[Redirect],
        serve: &Serve,
    ) -> HttpServer {
        let state = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let backend = PathBuf::from(git(root, &["--exec-path"])).join("git-http-backend");
        // A CGI wrapper that logs every request (method, path, query) and keeps each request
        // body (as `body.N`, after the faults of `serve` are applied) before running the backend.
        let log = state.path().join("requests");
        let wrapper = state.path().join("git-http-backend");
        fs_err::write(&wrapper, wrapper_script(&log, &backend, serve))
            .expect("write the backend wrapper");
        fs_err::set_permissions(
            &wrapper,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("make the wrapper executable");
        let backend = wrapper;
        let mut modules = vec!["mod_alias", "mod_cgi", "mod_setenv"];
        let mut extra = String::new();
        // lighttpd runs the URL hooks in module order: a redirect answered before or after the
        // credentials are checked.
        let after_auth = redirects.iter().any(|r| r.after_auth);
        if !redirects.is_empty() && !after_auth {
            modules.push("mod_redirect");
        }
        if tls {
            make_certificates(state.path());
            modules.push("mod_openssl");
            extra = format!(
                r#"ssl.engine = "enable"
ssl.pemfile = "{s}/server.crt"
ssl.privkey = "{s}/server.key"
"#,
                s = state.path().display()
            );
        }
        if auth {
            fs_err::write(state.path().join("users"), format!("{USER}:{PASSWORD}\n"))
                .expect("users");
            modules.extend(["mod_auth", "mod_authn_file"]);
            extra += &format!(
                r#"auth.backend = "plain"
auth.backend.plain.userfile = "{s}/users"
auth.require = ("/git/" => ("method" => "basic", "realm" => "git", "require" => "valid-user"))
"#,
                s = state.path().display()
            );
        }
        if after_auth {
            modules.push("mod_redirect");
        }
        for r in redirects {
            extra += &format!(
                "$HTTP[\"url\"] =~ \"{from}\" {{\n  url.redirect = (\"{from}\" => \"{to}\")\n  url.redirect-code = {code}\n}}\n",
                from = r.from,
                to = r.to,
                code = r.code,
            );
        }
        let modules: Vec<String> = modules.iter().map(|m| format!("\"{m}\"")).collect();
        let conf = state.path().join("lighttpd.conf");
        fs_err::write(
            &conf,
            format!(
                r#"server.modules = ({modules})
server.document-root = "{root}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{state}/error.log"
alias.url = ("/git/" => "{backend}/")
{extra}$HTTP["url"] =~ "^/git/" {{
  cgi.assign = ("" => "")
  setenv.add-environment = ("GIT_PROJECT_ROOT" => "{root}", "GIT_HTTP_EXPORT_ALL" => "")
}}
"#,
                modules = modules.join(", "),
                root = root.display(),
                state = state.path().display(),
                backend = backend.display(),
            ),
        )
        .expect("write conf");
        let child = Command::new(lighttpd())
            .args(["-D", "-f"])
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start lighttpd (scripts/test installs it)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "lighttpd did not start on port {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        HttpServer {
            child,
            port,
            scheme: if tls { "https" } else { "http" },
            state,
        }
    }

    pub fn url(&self, repo: &str) -> String {
        format!("{}://127.0.0.1:{}/git/{repo}", self.scheme, self.port)
    }

    /// How many fetches the server has begun: upload-pack handshakes (`GET info/refs`), one per
    /// connection a client opens to fetch, whatever protocol version follows.
    pub fn fetches(&self) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.starts_with("GET ") && r.ends_with("/info/refs?service=git-upload-pack"))
            .count()
    }

    /// Every request the Git backend answered so far: `METHOD PATH?QUERY`, in order.
    pub fn requests(&self) -> Vec<String> {
        fs_err::read_to_string(self.state.path().join("requests"))
            .map(|text| text.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// The body of every `POST` the backend answered, in order, as the backend got it (after
    /// the faults of [`Serve`]): the pkt-lines of each `fetch` command.
    pub fn posts(&self) -> Vec<String> {
        let mut bodies = Vec::new();
        for n in 1.. {
            match fs_err::read(self.state.path().join(format!("body.{n}"))) {
                Ok(body) => bodies.push(String::from_utf8_lossy(&body).into_owned()),
                Err(_) => break,
            }
        }
        bodies
    }

    /// The CA that signed the HTTPS server's certificate (for `SSL_CERT_FILE`).
    pub fn ca_file(&self) -> PathBuf {
        self.state.path().join("ca.crt")
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The CGI wrapper of [`HttpServer`]: logs the request to `log`, sets the upload-pack switches
/// of `serve` (as `GIT_CONFIG_*` variables, which every git the backend runs reads), keeps the
/// body of a `POST` beside the log after dropping the pkt-lines `serve` drops (fixing
/// `CONTENT_LENGTH`), and runs `backend` on it.
fn wrapper_script(log: &Path, backend: &Path, serve: &Serve) -> String {
    let state = log.parent().expect("the log's folder");
    let mut config = Vec::new();
    if serve.allow_filter {
        config.push(("uploadpack.allowFilter", "true"));
    }
    if serve.allow_any_sha1 {
        config.push(("uploadpack.allowAnySHA1InWant", "true"));
    }
    if serve.refuse_blob_none {
        config.push(("uploadpackfilter.blob:none.allow", "false"));
    }
    let mut script = format!(
        "#!/bin/sh\necho \"$REQUEST_METHOD $PATH_INFO?$QUERY_STRING\" >> '{log}'\n",
        log = log.display()
    );
    script += &format!("export GIT_CONFIG_COUNT={}\n", config.len());
    for (i, (key, value)) in config.iter().enumerate() {
        script += &format!("export GIT_CONFIG_KEY_{i}={key} GIT_CONFIG_VALUE_{i}={value}\n");
    }
    if serve.v0 {
        script += "unset HTTP_GIT_PROTOCOL GIT_PROTOCOL\n";
    }
    // pkt-lines: four hex digits of length (itself included), then the payload.
    let mut edits = String::new();
    if serve.ignore_filter {
        edits += r#"s/[0-9a-f]{4}filter [^\n]*\n//g;"#;
    }
    if let Some(filter) = serve.filter_instead {
        // The new pkt-line's length: four digits, then `filter <filter>` and a newline.
        let len = 4 + "filter \n".len() + filter.len();
        edits += &format!(r#"s/[0-9a-f]{{4}}filter blob:none\n/{len:04x}filter {filter}\n/g;"#);
    }
    if let Some(id) = &serve.omit_want {
        edits += &format!(r#"s/[0-9a-f]{{4}}want {id}\n// if (() = /want [0-9a-f]{{40}}/g) > 1;"#);
    }
    if let Some(id) = &serve.extra_want {
        edits += &format!(
            r#"s/([0-9a-f]{{4}}want [0-9a-f]{{40}}\n)/${{1}}0032want {id}\n/ unless /deepen/;"#
        );
    }
    if let Some(id) = &serve.answer_for {
        edits += &format!(r#"s/want [0-9a-f]{{40}}/want {id}/ if /deepen/;"#);
    }
    script += &format!(
        r#"if [ "$REQUEST_METHOD" = POST ]; then
  # Each body gets its own number, claimed atomically (`mkdir` fails if another request
  # claimed it first): concurrent fetches must not write one another's bodies.
  n=$(( $(ls '{state}' | grep -c '^claim\.') + 1 ))
  until mkdir '{state}/claim.'$n 2>/dev/null; do n=$((n + 1)); done
  perl -0777 -pe '{edits}' > '{state}/body.'$n
  CONTENT_LENGTH=$(wc -c < '{state}/body.'$n); export CONTENT_LENGTH
  if [ {refuse} = 1 ] && grep -q 'want ' '{state}/body.'$n && ! grep -q 'deepen' '{state}/body.'$n; then
    printf 'Status: 200 OK\r\nContent-Type: application/x-git-upload-pack-result\r\n\r\n'
    perl -ne 'if (/want ([0-9a-f]{{40}})/) {{ $m = "ERR upload-pack: not our ref $1\n"; printf "%04x%s", 4 + length $m, $m; exit }}' '{state}/body.'$n
    exit 0
  fi
  exec '{backend}' < '{state}/body.'$n
fi
exec '{backend}'
"#,
        state = state.display(),
        backend = backend.display(),
        refuse = u8::from(serve.refuse_blob_wants),
    );
    script
}

/// A throwaway CA and a certificate for 127.0.0.1 signed by it, made with the `openssl` CLI.
pub fn make_certificates(dir: &Path) {
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("run openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=skillfold-test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
    ]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    fs_err::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .expect("ext");
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        "-out",
        "server.crt",
    ]);
}

fn lighttpd() -> PathBuf {
    for dir in ["/usr/sbin", "/usr/local/sbin", "/usr/bin"] {
        let p = Path::new(dir).join("lighttpd");
        if p.exists() {
            return p;
        }
    }
    PathBuf::from("lighttpd")
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    listener.local_addr().expect("addr").port()
}

/// What a [`Scripted`] server answers one connection with, once it has read the request head.
#[derive(Clone)]
pub enum Answer {
    /// These bytes at once, then the connection is closed.
    Now(String),
    /// These bytes one every 200 ms, then a space every 200 ms for as long as the client reads:
    /// every byte resets an idle timeout, so only an overall deadline ends it.
    Trickle(String),
    /// The first bytes at once, then the second over and over, as fast as the client reads, for
    /// as long as it reads: a flood.
    Flood(String, String),
    /// These bytes (not text) at once, then the connection is closed.
    Raw(Vec<u8>),
    /// A flood of bytes that are not text: the first at once, then the second over and over.
    Endless(Vec<u8>, Vec<u8>),
}

/// A raw HTTP server on 127.0.0.1 that answers its n-th connection with the n-th of its answers
/// (the last for every connection after), and records every request head. Stopped on drop.
pub struct Scripted {
    pub port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    heads: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    sent: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Scripted {
    pub fn start(answers: Vec<Answer>) -> Scripted {
        use std::io::{BufRead as _, Write as _};
        use std::sync::atomic::Ordering;
        assert!(!answers.is_empty(), "a script answers something");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (stopped, seen, written) = (stop.clone(), heads.clone(), sent.clone());
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                if stopped.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(mut stream) = stream else { continue };
                let answer = answers[n.min(answers.len() - 1)].clone();
                let (stopped, seen, written) = (stopped.clone(), seen.clone(), written.clone());
                std::thread::spawn(move || {
                    let mut reader = std::io::BufReader::new(stream.try_clone().expect("clone"));
                    let mut head = String::new();
                    loop {
                        let mut line = String::new();
                        match reader.read_line(&mut line) {
                            Ok(0) | Err(_) => return,
                            Ok(_) if line == "\r\n" => break,
                            Ok(_) => head.push_str(&line),
                        }
                    }
                    seen.lock().expect("lock").push(head);
                    let mut write = |bytes: &[u8]| {
                        let ok = stream.write_all(bytes).is_ok();
                        if ok {
                            written.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                        }
                        ok
                    };
                    match answer {
                        Answer::Now(bytes) => {
                            write(bytes.as_bytes());
                        }
                        Answer::Raw(bytes) => {
                            write(&bytes);
                        }
                        Answer::Flood(head, line) => {
                            flood(head.as_bytes(), line.as_bytes(), &stopped, write);
                        }
                        Answer::Endless(head, line) => flood(&head, &line, &stopped, write),
                        Answer::Trickle(bytes) => {
                            for byte in bytes.bytes().chain(std::iter::repeat(b' ')) {
                                // A `TcpStream` writes at once: nothing to flush.
                                if stopped.load(Ordering::Relaxed) || !write(&[byte]) {
                                    return;
                                }
                                std::thread::sleep(Duration::from_millis(200));
                            }
                        }
                    }
                });
            }
        });
        Scripted {
            port,
            stop,
            heads,
            sent,
        }
    }

    /// The bytes written to every connection so far (those the client's socket took).
    pub fn sent(&self) -> u64 {
        self.sent.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// `http://127.0.0.1:PORT/git/<repo>`.
    pub fn url(&self, repo: &str) -> String {
        format!("http://127.0.0.1:{}/git/{repo}", self.port)
    }

    /// The head (request line and headers) of every request so far, in order.
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("lock").clone()
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Wake the accepting thread so that it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// `head`, then `line` over and over through `write` until it fails or `stopped` is set.
fn flood(
    head: &[u8],
    line: &[u8],
    stopped: &std::sync::atomic::AtomicBool,
    mut write: impl FnMut(&[u8]) -> bool,
) {
    let lines = line.repeat((64 * 1024 / line.len().max(1)).max(1));
    if write(head) {
        while !stopped.load(std::sync::atomic::Ordering::Relaxed) && write(&lines) {}
    }
}

/// A `301` to `location`, closing the connection.
pub fn moved(location: &str) -> Answer {
    Answer::Now(format!(
        "HTTP/1.1 301 Moved Permanently\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    ))
}
