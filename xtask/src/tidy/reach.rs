//! Tidy rules on what a crate reaches through the crates of the workspace, not only on what it
//! names: a rule on direct dependencies is kept by a crate that pulls the forbidden one in
//! through a third.

use std::collections::BTreeSet;

use super::{DepKind, Package, Violation};

pub(super) const RULE_CATALOG: &str = "`catalog` never reaches `runtime` (agent definitions are data the runtime reads, not code that runs one)";

/// `(from, never)`: `from` must not reach `never` through normal or build dependencies.
const NEVER: &[(&str, &str, &str)] = &[("subagent-catalog", "subagent-runtime", RULE_CATALOG)];

/// The workspace crates `name` reaches through normal and build dependencies, with the path to
/// each (`a -> b -> c`).
fn reached(packages: &[Package], name: &str) -> Vec<(String, String)> {
    let mut seen = BTreeSet::new();
    let mut found = Vec::new();
    let mut stack = vec![(name.to_owned(), name.to_owned())];
    while let Some((at, path)) = stack.pop() {
        let Some(package) = packages.iter().find(|p| p.name == at) else {
            continue;
        };
        for dep in package
            .dependencies
            .iter()
            .filter(|d| d.kind != DepKind::Dev)
        {
            if seen.insert(dep.name.clone()) {
                let path = format!("{path} -> {}", dep.name);
                found.push((dep.name.clone(), path.clone()));
                stack.push((dep.name.clone(), path));
            }
        }
    }
    found
}

/// The reach rules over `packages`.
pub(super) fn check_reach(packages: &[Package]) -> Vec<Violation> {
    let mut violations = Vec::new();
    for (from, never, rule) in NEVER {
        for (reached, path) in reached(packages, from) {
            if reached == *never {
                violations.push(Violation {
                    what: format!("{from} reaches {never}: {path}"),
                    rule,
                    fix: format!(
                        "move what needs {never} out of {from} (to {never} or a crate above both), then drop the dependency that pulls it in"
                    ),
                });
            }
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::super::{DepKind, Dependency, Package};
    use super::*;
    use pretty_assertions::assert_eq;

    fn package(name: &str, deps: &[(&str, DepKind)]) -> Package {
        Package {
            name: name.to_owned(),
            manifest: format!("crates/{name}/Cargo.toml").into(),
            kind: None,
            dependencies: deps
                .iter()
                .map(|(on, kind)| Dependency {
                    name: (*on).to_owned(),
                    kind: *kind,
                })
                .collect(),
        }
    }

    #[test]
    fn catalog_reaching_runtime_through_another_crate_is_named_with_the_path() {
        let packages = vec![
            package(
                "subagent-catalog",
                &[
                    ("subagent-glue", DepKind::Normal),
                    ("subagent-runtime", DepKind::Dev),
                ],
            ),
            package("subagent-glue", &[("subagent-runtime", DepKind::Normal)]),
            package("subagent-runtime", &[]),
        ];
        let found: Vec<String> = check_reach(&packages)
            .iter()
            .map(|v| v.what.clone())
            .collect();
        assert_eq!(
            found,
            [
                "subagent-catalog reaches subagent-runtime: subagent-catalog -> subagent-glue -> subagent-runtime"
            ]
        );
        // A dev-dependency alone (tests) is not reaching.
        let packages = vec![
            package("subagent-catalog", &[("subagent-runtime", DepKind::Dev)]),
            package("subagent-runtime", &[]),
        ];
        assert!(check_reach(&packages).is_empty());
    }
}
