struct Report;

/// Build a report.
#[iris::tool]
fn build_report(title: String) -> Report {
    let _ = title;
    Report
}

fn main() {}
