//! Questions the model asks the person (`ask_question`): answered from
//! `--answer ID=VALUE` for scripts, or on the terminal (numbers for the
//! options, or words of one's own).
#![allow(clippy::print_stderr, reason = "the question is asked on the terminal")]

use std::io::{BufRead as _, Write as _};

use iris_runtime::__wings::for_person;
use iris_runtime::question::{Answer, Question};
use iris_runtime::{QuestionReply, QuestionRequest};

/// Characters of a question's text or an option shown on the terminal.
const SHOWN_CHARS: usize = 500;

/// The answers given with `--answer`, by waiting item id.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scripted(Vec<(String, String)>);

impl Scripted {
    /// The `--answer ID=VALUE` arguments, or what is wrong with one.
    pub(crate) fn parse<'a>(values: impl IntoIterator<Item = &'a String>) -> Result<Self, String> {
        let mut answers = Vec::new();
        for value in values {
            let Some((id, answer)) = value.split_once('=') else {
                return Err(format!(
                    "`--answer {value}` names no item: write `--answer ID=VALUE`, ID as the waiting question lists it"
                ));
            };
            answers.push((id.trim().to_owned(), answer.to_owned()));
        }
        Ok(Self(answers))
    }

    /// Whether any answer was given.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The item ids answers were given for.
    pub(crate) fn ids(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(id, _)| id.as_str())
    }

    /// The reply `--answer` gives item `id`, which asks `request`: `None`
    /// when none was given for it.
    ///
    /// An empty VALUE declines. One question takes VALUE as its answer; a
    /// JSON list of strings answers several, one per question, in order.
    /// An answer chooses an offered label (in any case; for
    /// `multi_select`, labels separated by commas choose each), or is the
    /// person's own words when it starts with `text:`; anything else is
    /// refused, so a misspelled label is never sent as words.
    pub(crate) fn reply(
        &self,
        id: &str,
        request: &QuestionRequest,
    ) -> Option<Result<QuestionReply, String>> {
        let (_, value) = self.0.iter().rev().find(|(given, _)| given == id)?;
        if value.trim().is_empty() {
            return Some(Ok(QuestionReply::decline()));
        }
        let texts: Vec<String> = if value.trim_start().starts_with('[') {
            match serde_json::from_str(value) {
                Ok(texts) => texts,
                Err(e) => {
                    return Some(Err(format!(
                        "`--answer {id}=...` is not a JSON list of strings ({e}); give one answer per question"
                    )));
                }
            }
        } else {
            vec![value.clone()]
        };
        if texts.len() != request.questions.len() {
            return Some(Err(format!(
                "`--answer {id}=...` gives {} answer(s) to {} question(s); give a JSON list with one answer per question, in order",
                texts.len(),
                request.questions.len()
            )));
        }
        let answers = match request
            .questions
            .iter()
            .zip(&texts)
            .map(|(question, text)| answer_of(question, text))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(answers) => answers,
            Err(why) => return Some(Err(format!("`--answer {id}=...`: {why}"))),
        };
        let reply = QuestionReply::answer(request, answers);
        Some(request.check(&reply).map(|()| reply))
    }
}

/// Written before an answer in one's own words.
const OWN_WORDS: &str = "text:";

/// `text` as the answer to `question`: an offered label chosen (its case
/// aside), several for a `multi_select` question, or words after `text:`.
///
/// # Errors
/// A label that was not offered, saying which were.
fn answer_of(question: &Question, text: &str) -> Result<Answer, String> {
    let text = text.trim();
    if let Some(words) = text.strip_prefix(OWN_WORDS) {
        return Ok(Answer::text(words.trim()));
    }
    let offered = |given: &str| {
        question
            .options
            .iter()
            .find(|o| o.label == given)
            .or_else(|| {
                let mut alike = question
                    .options
                    .iter()
                    .filter(|o| o.label.eq_ignore_ascii_case(given));
                alike.next().filter(|_| alike.next().is_none())
            })
            .map(|o| o.label.clone())
    };
    if let Some(label) = offered(text) {
        return Ok(Answer::choose(label));
    }
    if question.multi_select {
        let labels: Option<Vec<String>> = text.split(',').map(|l| offered(l.trim())).collect();
        if let Some(labels) = labels.filter(|labels| labels.len() > 1) {
            return Ok(Answer::choose_all(labels));
        }
    }
    let options: Vec<String> = question
        .options
        .iter()
        .map(|o| format!("`{}`", for_person(&o.label, SHOWN_CHARS)))
        .collect();
    Err(format!(
        "`{}` is not an option of `{}` (they are {}); choose one, or answer in your own words after `{OWN_WORDS}`",
        for_person(text, SHOWN_CHARS),
        for_person(&question.header, SHOWN_CHARS),
        options.join(", ")
    ))
}

/// Asks `request` on the terminal; `None` when the terminal closed.
pub(crate) fn ask(request: &QuestionRequest) -> Option<QuestionReply> {
    let mut answers = Vec::with_capacity(request.questions.len());
    for question in &request.questions {
        eprintln!(
            "\n[{}] {}",
            for_person(&question.header, SHOWN_CHARS),
            for_person(&question.question, SHOWN_CHARS)
        );
        for (at, option) in question.options.iter().enumerate() {
            let label = for_person(&option.label, SHOWN_CHARS);
            if option.description.is_empty() {
                eprintln!("  {}. {label}", at + 1);
            } else {
                let description = for_person(&option.description, SHOWN_CHARS);
                eprintln!("  {}. {label}: {description}", at + 1);
            }
        }
        let how = if question.multi_select {
            "numbers separated by commas"
        } else {
            "a number"
        };
        loop {
            eprint!("{how}, or your own words (empty declines): ");
            let _ = std::io::stderr().flush();
            let mut line = String::new();
            match std::io::stdin().lock().read_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            let line = line.trim();
            if line.is_empty() {
                return Some(QuestionReply::decline());
            }
            match chosen(question, line) {
                Chosen::Options(labels) => {
                    answers.push(Answer::choose_all(labels));
                    break;
                }
                Chosen::Words => {
                    answers.push(Answer::text(line));
                    break;
                }
                Chosen::Wrong(why) => eprintln!("{why}"),
            }
        }
    }
    let reply = QuestionReply::answer(request, answers);
    request.check(&reply).ok().map(|()| reply)
}

/// What a line typed at the terminal chooses.
enum Chosen {
    /// These options, by label.
    Options(Vec<String>),
    /// Nothing: the line is the person's own words.
    Words,
    /// Numbers that do not fit, and why.
    Wrong(String),
}

fn chosen(question: &Question, line: &str) -> Chosen {
    let parts: Vec<&str> = line.split(',').map(str::trim).collect();
    let numbers: Option<Vec<usize>> = parts.iter().map(|p| p.parse().ok()).collect();
    let Some(numbers) = numbers else {
        return Chosen::Words;
    };
    if numbers.len() > 1 && !question.multi_select {
        return Chosen::Wrong("choose one number".to_owned());
    }
    let mut labels = Vec::with_capacity(numbers.len());
    for number in numbers {
        let Some(option) = number
            .checked_sub(1)
            .and_then(|at| question.options.get(at))
        else {
            return Chosen::Wrong(format!("choose from 1 to {}", question.options.len()));
        };
        labels.push(option.label.clone());
    }
    Chosen::Options(labels)
}

#[cfg(test)]
mod tests {
    use iris_core::RunId;
    use iris_runtime::question::parse_questions;
    use serde_json::json;

    use super::*;

    fn request(multi_select: bool) -> QuestionRequest {
        let questions = parse_questions(&json!({"questions": [{
            "question": "Which database?", "header": "Database",
            "options": ["Postgres", "SQLite", "MySQL"], "multi_select": multi_select
        }]}))
        .expect("valid");
        QuestionRequest::new(RunId::new("r"), "c1".into(), questions, None)
    }

    fn scripted(value: &str) -> Scripted {
        Scripted::parse([&format!("c1={value}")]).expect("parses")
    }

    #[test]
    fn a_label_chooses_and_words_after_text_are_the_persons_own() {
        let asked = request(false);
        let chose = scripted("SQLite").reply("c1", &asked).expect("given");
        assert_eq!(
            chose,
            Ok(QuestionReply::answer(
                &asked,
                vec![Answer::choose("SQLite")]
            ))
        );
        assert_eq!(
            scripted("sqlite").reply("c1", &asked).expect("given"),
            chose,
            "a label's case aside"
        );
        let words = scripted("text: whatever ops runs")
            .reply("c1", &asked)
            .expect("given");
        assert_eq!(
            words,
            Ok(QuestionReply::answer(
                &asked,
                vec![Answer::text("whatever ops runs")]
            ))
        );
        assert_eq!(
            scripted("").reply("c1", &asked),
            Some(Ok(QuestionReply::decline()))
        );
        assert!(scripted("x").reply("c2", &asked).is_none());
    }

    /// A label that was not offered is refused, never sent as words
    /// (finding: `--answer q1=Postgress` reached the run as free text).
    #[test]
    fn a_label_not_offered_is_refused_naming_the_options() {
        let asked = request(false);
        let why = scripted("Postgress")
            .reply("c1", &asked)
            .expect("given")
            .expect_err("refused");
        assert!(
            why.contains("`Postgress` is not an option of `Database`"),
            "{why}"
        );
        assert!(why.contains("`Postgres`, `SQLite`, `MySQL`"), "{why}");
        assert!(why.contains("`text:`"), "{why}");
    }

    #[test]
    fn several_labels_choose_each_only_where_several_may_be_chosen() {
        let multi = request(true);
        assert_eq!(
            scripted("Postgres, MySQL").reply("c1", &multi),
            Some(Ok(QuestionReply::answer(
                &multi,
                vec![Answer::choose_all(["Postgres", "MySQL"])]
            )))
        );
        let single = request(false);
        assert!(matches!(
            scripted("Postgres, MySQL").reply("c1", &single),
            Some(Err(_))
        ));
        assert_eq!(
            scripted("text:Postgres, MySQL").reply("c1", &single),
            Some(Ok(QuestionReply::answer(
                &single,
                vec![Answer::text("Postgres, MySQL")]
            )))
        );
    }

    #[test]
    fn a_count_that_does_not_fit_says_what_to_give() {
        let why = scripted(r#"["SQLite", "extra"]"#)
            .reply("c1", &request(false))
            .expect("given")
            .expect_err("refused");
        assert!(why.contains("one answer per question"), "{why}");
        assert!(Scripted::parse([&"no-equals".to_owned()]).is_err());
    }

    #[test]
    fn numbers_typed_at_the_terminal_choose_options() {
        let single = request(false);
        let question = &single.questions[0];
        assert!(matches!(chosen(question, "2"), Chosen::Options(l) if l == ["SQLite"]));
        assert!(matches!(chosen(question, "1, 3"), Chosen::Wrong(_)));
        assert!(matches!(chosen(question, "9"), Chosen::Wrong(_)));
        assert!(matches!(chosen(question, "the cheap one"), Chosen::Words));
        let multi = request(true);
        assert!(
            matches!(chosen(&multi.questions[0], "1,3"), Chosen::Options(l) if l == ["Postgres", "MySQL"])
        );
    }
}
