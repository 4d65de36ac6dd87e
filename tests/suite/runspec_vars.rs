//! `${…}` substitution for run-spec commands.

use faultline::runspec::vars::{VarError, Vars};

#[test]
fn values_nest_and_ports_are_stable_per_name() {
    let mut vars = Vars::default();
    vars.set("faultline", "/bin/faultline");
    vars.set("store", "${faultline} demo-sut");
    let a = vars
        .expand("${store} node --listen 127.0.0.1:${port:n1}")
        .expect("expand");
    let b = vars
        .expand("ready --targets 127.0.0.1:${port:n1},127.0.0.1:${port:n2}")
        .expect("expand");
    let n1 = vars.ports()["n1"];
    let n2 = vars.ports()["n2"];
    assert_eq!(
        a,
        format!("/bin/faultline demo-sut node --listen 127.0.0.1:{n1}")
    );
    assert_eq!(b, format!("ready --targets 127.0.0.1:{n1},127.0.0.1:{n2}"));
    assert_ne!(n1, 0);
    assert_ne!(n1, n2);
}

#[test]
fn unknown_unterminated_and_cyclic_variables_are_errors() {
    let mut vars = Vars::default();
    assert_eq!(
        vars.expand("run ${nope}"),
        Err(VarError::Unknown("nope".into()))
    );
    assert!(matches!(
        vars.expand("run ${open"),
        Err(VarError::Unterminated(_))
    ));
    vars.set("a", "${b}");
    vars.set("b", "${a}");
    assert!(matches!(vars.expand("${a}"), Err(VarError::TooDeep(_))));
}

#[test]
fn text_without_variables_is_unchanged() {
    let mut vars = Vars::default();
    assert_eq!(
        vars.expand("echo $HOME {x}").expect("expand"),
        "echo $HOME {x}"
    );
}
