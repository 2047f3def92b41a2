//! `fake-model --scenario FILE [--port N] [--port-file FILE] [--keep-requests N]`: serves a
//! scenario file on 127.0.0.1 until killed, and prints (and writes) the port. `--keep-requests`
//! bounds the requests it remembers (the latest N) for long runs such as `cargo xtask load`.

use std::path::PathBuf;
use std::process::ExitCode;

use subagent_test_support::FakeServer;

const USAGE: &str =
    "usage: fake-model --scenario FILE [--port N] [--port-file FILE] [--keep-requests N]";

struct Args {
    scenario: PathBuf,
    port: u16,
    port_file: Option<PathBuf>,
    keep_requests: Option<usize>,
}

fn parse_args() -> Result<Args, String> {
    let mut scenario = None;
    let mut port = 0u16;
    let mut port_file = None;
    let mut keep_requests = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_owned(), Some(v.to_owned())),
            None => (arg.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--scenario" => scenario = Some(PathBuf::from(value()?)),
            "--port" => {
                port = value()?
                    .parse()
                    .map_err(|e| format!("--port: {e}\n{USAGE}"))?;
            }
            "--port-file" => port_file = Some(PathBuf::from(value()?)),
            "--keep-requests" => {
                keep_requests = Some(
                    value()?
                        .parse()
                        .map_err(|e| format!("--keep-requests: {e}\n{USAGE}"))?,
                );
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    Ok(Args {
        scenario: scenario.ok_or_else(|| format!("--scenario is required\n{USAGE}"))?,
        port,
        port_file,
        keep_requests,
    })
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let scenarios = match subagent_test_support::Scenarios::load(&args.scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fake-model: {e}");
            return ExitCode::from(2);
        }
    };
    let server = match FakeServer::start_on(scenarios, args.port).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("fake-model: cannot bind 127.0.0.1:{}: {e}", args.port);
            return ExitCode::FAILURE;
        }
    };
    if let Some(keep) = args.keep_requests {
        server.keep_requests(keep);
    }
    let port = server.port();
    if let Some(file) = &args.port_file {
        // Write then rename, so a reader never sees a half-written port.
        let tmp = file.with_extension("tmp");
        if let Err(e) =
            std::fs::write(&tmp, format!("{port}\n")).and_then(|()| std::fs::rename(&tmp, file))
        {
            eprintln!("fake-model: cannot write {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    }
    println!("{port}");
    eprintln!(
        "fake-model: serving {} on {}",
        args.scenario.display(),
        server.url()
    );
    let _ = tokio::signal::ctrl_c().await;
    ExitCode::SUCCESS
}
