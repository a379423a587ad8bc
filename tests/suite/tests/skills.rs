//! Agent Skills read and found: the format's rules (the reference
//! validator's vectors among them) strictly and leniently, every problem
//! with its place and the closest valid value, and discovery's precedence,
//! trust and bounds.

use std::path::{Path, PathBuf};

use iris::skills::{Severity, SkillRoots, SkillScope, Strictness, read_skill};

/// Writes `SKILL.md` with `text` in `root/folder`; the folder.
fn skill_at(root: &Path, folder: &str, text: &str) -> PathBuf {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
    dir
}

fn front(name: &str, rest: &str) -> String {
    format!("---\nname: {name}\ndescription: A test skill\n{rest}---\n# Body\n\nSteps.\n")
}

/// The strict reading's messages for a skill in folder `folder`.
fn strict_problems(folder: &str, text: &str) -> Vec<String> {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_at(root.path(), folder, text);
    match read_skill(&dir, Strictness::Strict) {
        Ok(_) => Vec::new(),
        Err(problems) => problems.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn the_reference_validators_vectors_hold() {
    // Valid.
    assert!(strict_problems("my-skill", &front("my-skill", "")).is_empty());
    assert!(
        strict_problems(
            "my-skill",
            &front(
                "my-skill",
                "license: MIT\nmetadata:\n  author: Test\n  version: \"1.0\"\ncompatibility: Requires Python 3.11+\nallowed-tools: Bash(jq:*) Bash(git:*)\n"
            )
        )
        .is_empty()
    );
    // Invalid, each saying what instead.
    let cases: &[(&str, &str, &str)] = &[
        ("MySkill", "MySkill", "`myskill`"),
        ("-my-skill", "-my-skill", "starts or ends with a hyphen"),
        ("my--skill", "my--skill", "two hyphens in a row"),
        ("my_skill", "my_skill", "(for example `my-skill`)"),
        (
            "wrong-name",
            "correct-name",
            "is not its folder's name, `wrong-name`",
        ),
        ("НАВЫК", "НАВЫК", "lowercase ASCII"),
    ];
    for (folder, name, said) in cases {
        let problems = strict_problems(folder, &front(name, ""));
        assert!(
            problems.iter().any(|p| p.contains(said)),
            "{name}: {problems:?}"
        );
    }
    let long = "a".repeat(65);
    assert!(strict_problems(&long, &front(&long, ""))[0].contains("at most 64"));
    let problems = strict_problems(
        "my-skill",
        &format!(
            "---\nname: my-skill\ndescription: {}\n---\n",
            "x".repeat(1025)
        ),
    );
    assert!(problems[0].contains("at most 1024"), "{problems:?}");
    let problems = strict_problems(
        "my-skill",
        &front("my-skill", &format!("compatibility: {}\n", "x".repeat(501))),
    );
    assert!(problems[0].contains("at most 500"), "{problems:?}");
    let problems = strict_problems("my-skill", &front("my-skill", "unknown_field: x\n"));
    assert!(
        problems[0].contains("`unknown_field`: is not a field of the format"),
        "{problems:?}"
    );
    // The reference validator takes Unicode lowercase names; strictly
    // Iris keeps names ASCII (decided), and reads them leniently.
    assert!(strict_problems("技能", &front("技能", ""))[0].contains("lowercase ASCII"));
    let root = tempfile::tempdir().unwrap();
    let dir = skill_at(root.path(), "мой-навык", &front("мой-навык", ""));
    let read = read_skill(&dir, Strictness::Lenient).unwrap();
    assert_eq!(read.skill.name, "мой-навык");
    assert_eq!(read.warnings.len(), 1, "{:?}", read.warnings);
}

#[test]
fn a_strict_reading_reports_every_problem_at_once_with_its_place() {
    let text = "---\nname: PDF_Tools\ndescription: Fill PDF forms. Use for PDFs.\nallowed_tools: Read\nmetadata:\n  version: 2\n---\nBody\n";
    let problems = strict_problems("pdf-tools", text);
    assert_eq!(problems.len(), 4, "{problems:?}");
    assert!(problems[0].ends_with(
        "SKILL.md:2:7: `name`: `PDF_Tools` may hold only lowercase ASCII letters, digits and hyphens (for example `pdf-tools`)"
    ), "{problems:?}");
    assert!(
        problems[1].contains(":2:7: `name`: `PDF_Tools` is not its folder's name"),
        "{problems:?}"
    );
    assert!(
        problems[2].contains(
            ":4:16: `allowed_tools`: is not a field of the format; did you mean `allowed-tools`?"
        ),
        "{problems:?}"
    );
    assert!(
        problems[3].contains(":6:3: `metadata`: `version` must be text: write `version: \"2\"`"),
        "{problems:?}"
    );
}

#[test]
fn a_lenient_reading_loads_what_the_guidance_forgives_and_says_why() {
    let root = tempfile::tempdir().unwrap();
    // Another client's file: a name that is not its folder's, Claude's
    // extension fields, an unquoted colon, allowed-tools as a list.
    let dir = skill_at(
        root.path(),
        "pdf",
        "---\nname: pdf-processing\ndescription: Use this skill when: the user asks about PDFs\nallowed-tools: [Read, Grep]\nmodel: opus\n---\n# PDFs\n",
    );
    assert!(read_skill(&dir, Strictness::Strict).is_err());
    let read = read_skill(&dir, Strictness::Lenient).unwrap();
    assert_eq!(read.skill.name, "pdf-processing");
    assert_eq!(
        read.skill.description,
        "Use this skill when: the user asks about PDFs"
    );
    assert_eq!(read.skill.allowed_tools, ["Read", "Grep"]);
    assert_eq!(read.skill.other_fields["model"], "opus");
    assert_eq!(read.skill.body, "# PDFs");
    let said: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    assert!(said.iter().all(|w| w.contains("warning: ")), "{said:?}");
    for expected in [
        "unquoted `: `",
        "not its folder's name",
        "space-separated",
        "`model`",
    ] {
        assert!(
            said.iter().any(|w| w.contains(expected)),
            "{expected}: {said:?}"
        );
    }

    // Skipped however read: no description, or no YAML at all.
    let none = skill_at(root.path(), "none", "---\nname: none\n---\nBody\n");
    let problems = read_skill(&none, Strictness::Lenient).unwrap_err();
    assert!(
        problems[0]
            .to_string()
            .contains("`description`: is missing"),
        "{problems:?}"
    );
    let empty = skill_at(
        root.path(),
        "empty",
        "---\nname: empty\ndescription: \"\"\n---\n",
    );
    assert!(read_skill(&empty, Strictness::Lenient).is_err());
    let broken = skill_at(
        root.path(),
        "broken",
        "---\nname: [broken\ndescription: x\n---\n",
    );
    let problems = read_skill(&broken, Strictness::Lenient).unwrap_err();
    assert!(
        problems[0].to_string().contains("is not YAML"),
        "{problems:?}"
    );
    assert!(problems[0].line >= Some(2), "{problems:?}");
    let bare = skill_at(root.path(), "bare", "# Just markdown\n");
    let problems = read_skill(&bare, Strictness::Lenient).unwrap_err();
    assert!(
        problems[0]
            .to_string()
            .contains("does not start with front matter")
    );
}

#[test]
fn project_skills_win_over_user_skills_and_only_when_trusted() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let project_root = project.path().join(".agents/skills");
    let user_root = home.path().join(".agents/skills");
    skill_at(&project_root, "review", &front("review", ""));
    skill_at(&user_root, "review", &front("review", ""));
    skill_at(&user_root, "deploy", &front("deploy", ""));
    let roots = SkillRoots::new()
        .with_root(&user_root, SkillScope::User, Strictness::Lenient)
        .with_root(&project_root, SkillScope::Project, Strictness::Lenient);

    let untrusted = roots.clone().find();
    let names: Vec<&str> = untrusted.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["deploy", "review"]);
    assert!(
        untrusted
            .get("review")
            .unwrap()
            .root
            .starts_with(home.path())
    );
    assert!(
        untrusted
            .problems
            .iter()
            .any(|p| p.message.contains("not marked trusted"))
    );

    let trusted = roots.trust_project(true).find();
    let review = trusted.get("review").unwrap();
    assert!(
        review
            .root
            .starts_with(project.path().canonicalize().unwrap())
    );
    assert_eq!(trusted.shadowed.len(), 1);
    let collision = trusted.problems.iter().find(|p| p.key == "name").unwrap();
    assert_eq!(collision.severity, Severity::Warning);
    assert!(
        collision
            .message
            .contains("a project skill wins over a user skill"),
        "{collision}"
    );
}

#[test]
fn the_walk_skips_hidden_folders_modules_and_links_out_and_is_bounded() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let skills = root.path().join("skills");
    skill_at(&skills, "team/nested", &front("nested", ""));
    skill_at(&skills, ".hidden/secret", &front("secret", ""));
    skill_at(&skills, "node_modules/vendored", &front("vendored", ""));
    skill_at(outside.path(), "elsewhere", &front("elsewhere", ""));
    // A skill's own folders are not looked into for more skills.
    skill_at(&skills, "outer", &front("outer", ""));
    skill_at(&skills.join("outer"), "inner", &front("inner", ""));
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), skills.join("link-out")).unwrap();
    let found = SkillRoots::new()
        .with_root(&skills, SkillScope::User, Strictness::Strict)
        .find();
    let names: Vec<&str> = found.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["nested", "outer"], "{:?}", found.problems);
    #[cfg(unix)]
    assert!(
        found
            .problems
            .iter()
            .any(|p| p.message.contains("links out of its root"))
    );

    let shallow = SkillRoots::new()
        .with_root(&skills, SkillScope::User, Strictness::Strict)
        .bounded(1, 2000)
        .find();
    assert_eq!(shallow.skills.len(), 1, "team/nested is two levels down");
    let few = SkillRoots::new()
        .with_root(&skills, SkillScope::User, Strictness::Strict)
        .bounded(6, 2)
        .find();
    assert!(
        few.problems
            .iter()
            .any(|p| p.message.contains("stopped after looking into 2 folders"))
    );
}

/// A skill's files are read the way the file tools read theirs: opened
/// once beneath the skill's folder, never through a link out of it, never
/// a hard link to a file elsewhere, never waiting on a FIFO; and a file
/// swapped for a link out while it is read never yields the outside file.
#[test]
fn a_skills_files_are_read_beneath_its_folder_and_nothing_else() {
    let root = tempfile::tempdir().unwrap();
    let outside = root.path().join("outside.txt");
    std::fs::write(&outside, "the host's secret\n").unwrap();
    let folder = skill_at(
        root.path(),
        "notes",
        "---\nname: notes\ndescription: Keep notes. Use when asked.\n---\nBody.\n",
    );
    let skill = read_skill(&folder, Strictness::Strict).unwrap().skill;
    std::fs::write(folder.join("plain.md"), "plain\n").unwrap();
    std::fs::hard_link(&outside, folder.join("linked.md")).unwrap();
    std::os::unix::fs::symlink(&outside, folder.join("out.md")).unwrap();
    nix::unistd::mkfifo(&folder.join("pipe.md"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    assert_eq!(
        iris::skills::read_file(&skill, "plain.md").text_content(),
        "plain\n"
    );
    for (file, why) in [
        ("linked.md", "other names"),
        ("out.md", "leads out of the skill's folder"),
        ("pipe.md", "not a regular file"),
    ] {
        let refused = iris::skills::read_file(&skill, file);
        assert!(refused.is_error(), "{file}: {refused:?}");
        assert!(
            refused.text_content().contains(why),
            "{file}: {}",
            refused.text_content()
        );
    }

    // Swapped between a plain file and a link out, again and again.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (folder, outside, stop) = (
            folder.clone(),
            outside.clone(),
            std::sync::Arc::clone(&stop),
        );
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::fs::remove_file(folder.join("swap.link"));
                let _ = std::os::unix::fs::symlink(&outside, folder.join("swap.link"));
                let _ = std::fs::rename(folder.join("swap.link"), folder.join("swap.md"));
                let _ = std::fs::write(folder.join("swap.plain"), "plain\n");
                let _ = std::fs::rename(folder.join("swap.plain"), folder.join("swap.md"));
            }
        })
    };
    for _ in 0..2_000 {
        let read = iris::skills::read_file(&skill, "swap.md");
        assert!(!read.text_content().contains("secret"), "{read:?}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
}

/// A `SKILL.md` that links out of its folder, or is a hard link to a file
/// elsewhere, is not the skill's own: it does not load.
#[test]
fn a_skill_file_from_elsewhere_does_not_load() {
    let root = tempfile::tempdir().unwrap();
    let elsewhere = root.path().join("elsewhere.md");
    std::fs::write(
        &elsewhere,
        "---\nname: linked\ndescription: From elsewhere. Use never.\n---\nBody.\n",
    )
    .unwrap();
    for (name, link) in [
        (
            "linked",
            Box::new(|from: &Path, to: &Path| std::os::unix::fs::symlink(from, to))
                as Box<dyn Fn(&Path, &Path) -> std::io::Result<()>>,
        ),
        (
            "hard",
            Box::new(|from: &Path, to: &Path| std::fs::hard_link(from, to)),
        ),
    ] {
        let folder = root.path().join("skills").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        link(&elsewhere, &folder.join("SKILL.md")).unwrap();
        let problems = read_skill(&folder, Strictness::Lenient).expect_err("refused");
        let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(
            said.iter()
                .any(|p| p.contains("leads out of its folder") || p.contains("other names")),
            "{name}: {said:?}"
        );
    }
}
