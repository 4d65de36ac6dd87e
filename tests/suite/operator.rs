//! The scripted operator: answers file first, `--yes` policy second, never an install.

use faultline::session::operator::{
    Operator, Question, QuestionKind, Scripted, UNKNOWN_BLAME, parse_answers,
};

fn classify(id: &str) -> Question {
    Question {
        id: id.into(),
        kind: QuestionKind::ClassifyFailure,
        prompt: "blame class and bug type".into(),
        free_text: faultline::session::operator::FreeText::Line,
        default: UNKNOWN_BLAME.into(),
        ..Question::default()
    }
}

fn install() -> Question {
    Question {
        id: "install.libfaketime".into(),
        kind: QuestionKind::ApproveChange,
        prompt: "apt-get install faketime".into(),
        choices: faultline::session::operator::approve_decline("the install"),
        default: "approve".into(),
        ..Question::default()
    }
}

#[tokio::test]
async fn yes_classifies_failures_as_unknown_but_never_approves_installs() {
    let mut op = Scripted {
        yes: true,
        ..Scripted::default()
    };
    let answer = op.ask(&classify("D3.classify")).await.expect("answered");
    assert_eq!(answer.expect("yes answers").text, UNKNOWN_BLAME);
    // Even a question whose default is "approve" is declined by --yes.
    let declined = op.ask(&install()).await.expect("answered");
    let declined = declined.expect("--yes answers an install question: it declines");
    assert_eq!(declined.text, "decline");
    assert!(declined.by.contains("--yes"), "{}", declined.by);
}

#[tokio::test]
async fn without_yes_an_install_question_is_unanswered_and_names_the_way_out() {
    let mut op = Scripted::default();
    let refused = op.ask(&install()).await.expect("answered");
    let err = refused.expect_err("nobody approved anything");
    assert!(err.to_string().contains("install.libfaketime"), "{err}");
    assert!(err.to_string().contains("--approve-installs"), "{err}");
}

#[tokio::test]
async fn approve_installs_approves_only_changes() {
    let mut op = Scripted {
        approve_installs: true,
        ..Scripted::default()
    };
    let approved = op.ask(&install()).await.expect("answered");
    assert_eq!(approved.expect("approved").text, "approve");
    let classify = op.ask(&classify("D3.classify")).await.expect("answered");
    assert!(classify.is_err(), "--approve-installs answers nothing else");
}

fn privileged() -> Question {
    faultline::engine::privileged::question("D2", &["cut: 1 DROP rule(s) in netns b".into()])
}

#[tokio::test]
async fn privileged_actions_need_their_own_flag_and_yes_declines_them() {
    let mut yes = Scripted {
        yes: true,
        approve_installs: true,
        ..Scripted::default()
    };
    let declined = yes
        .ask(&privileged())
        .await
        .expect("sent")
        .expect("answered");
    assert_eq!(
        declined.text, "decline",
        "--approve-installs approves no fault"
    );
    assert_eq!(declined.by, "--yes (never approves a privileged action)");
    let mut flag = Scripted {
        approve_privileged: true,
        ..Scripted::default()
    };
    let approved = flag
        .ask(&privileged())
        .await
        .expect("sent")
        .expect("answered");
    assert_eq!(
        (approved.text.as_str(), approved.by.as_str()),
        ("approve", "--approve-privileged")
    );
    let install = flag.ask(&install()).await.expect("sent");
    assert!(install.is_err(), "--approve-privileged approves no install");
    let mut nobody = Scripted::default();
    let err = nobody
        .ask(&privileged())
        .await
        .expect("sent")
        .expect_err("unanswered");
    assert!(err.to_string().contains("privileged.D2"), "{err}");
    assert!(err.to_string().contains("--approve-privileged"), "{err}");
}

#[tokio::test]
async fn the_answers_file_wins_and_is_credited() {
    let answers = parse_answers(
        "answers.yaml",
        "D3.classify: \"SUT; crash-recovery; durability\"\ninstall.libfaketime: approve\n",
    )
    .expect("valid answers file");
    let mut op = Scripted {
        yes: false,
        answers,
        source: "answers file answers.yaml".into(),
        ..Scripted::default()
    };
    let a = op
        .ask(&classify("D3.classify"))
        .await
        .expect("sent")
        .expect("answered");
    assert_eq!(a.text, "SUT; crash-recovery; durability");
    assert_eq!(a.by, "answers file answers.yaml");
    assert!(op.ask(&install()).await.expect("sent").is_ok());
    let missing = op.ask(&classify("D9.classify")).await.expect("sent");
    assert!(
        missing
            .expect_err("unanswered")
            .to_string()
            .contains("D9.classify")
    );
}

#[tokio::test]
async fn an_answer_the_question_does_not_take_is_never_handed_to_the_engine() {
    let mut op = Scripted {
        answers: [("install.libfaketime".to_string(), "maybe".to_string())].into(),
        source: "answers file a.yaml".into(),
        ..Scripted::default()
    };
    let refused = op
        .ask(&install())
        .await
        .expect("sent")
        .expect_err("refused");
    let said = refused.to_string();
    assert!(
        said.contains("install.libfaketime") && said.contains("allowed: approve, decline"),
        "{said}"
    );
    // Spelled another way it is taken, as the choice's own spelling.
    op.answers
        .insert("install.libfaketime".into(), "  APPROVE ".into());
    let taken = op.ask(&install()).await.expect("sent").expect("answered");
    assert_eq!(taken.text, "approve");
}

#[test]
fn a_malformed_answers_file_names_file_and_line() {
    let err =
        parse_answers("answers.yaml", "D3.classify: ok\nbad: [1, 2\n").expect_err("malformed");
    let text = err.to_string();
    assert!(text.starts_with("answers.yaml:"), "{text}");
    assert!(err.line >= 2, "{text}");
}

/// An interactive operator that only records what it was asked.
struct Recorder(std::sync::mpsc::Sender<String>);

impl faultline::session::operator::Operator for Recorder {
    fn ask(
        &mut self,
        question: &faultline::session::operator::Question,
    ) -> tokio::sync::oneshot::Receiver<
        Result<faultline::session::operator::Answer, faultline::session::operator::Unanswered>,
    > {
        let _ = self.0.send(question.id.clone());
        tokio::sync::oneshot::channel().1
    }
}

#[tokio::test]
async fn an_answers_file_in_front_of_the_ui_answers_what_it_knows() {
    use faultline::session::operator::Layered;
    let (tx, rx) = std::sync::mpsc::channel();
    let mut op = Layered {
        scripted: Scripted {
            answers: [("install.libfaketime".to_string(), "approve".to_string())].into(),
            source: "answers file a.yaml".into(),
            ..Scripted::default()
        },
        interactive: Recorder(tx),
    };
    let answered = op.ask(&install()).await.expect("sent").expect("answered");
    assert_eq!(
        (answered.text.as_str(), answered.by.as_str()),
        ("approve", "answers file a.yaml")
    );
    assert!(
        rx.try_recv().is_err(),
        "the UI was asked what the file answers"
    );
    let _pending = op.ask(&classify("D3.blame"));
    let asked = rx.recv().expect("the UI gets the rest");
    assert_eq!(asked, "D3.blame");
}
