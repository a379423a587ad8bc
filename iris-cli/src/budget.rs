//! `iris run --budget`: bounds written `key=value`, comma-separated
//! (`tokens=20000,usd=0.5,requests=30`), as the keys of an agent file's
//! `budget:` section.

use std::time::Duration;

use iris_agent::Budget;

/// The keys `--budget` takes.
const KEYS: &str = "tokens, input_tokens, output_tokens, usd, requests, tool_calls, active_seconds";

/// The budget `spec` writes.
///
/// # Errors
/// What is wrong with it, naming the key and the keys there are.
pub(crate) fn parse(spec: &str) -> Result<Budget, String> {
    let mut budget = Budget::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((key, value)) = part.split_once('=') else {
            return Err(format!("`{part}` is not `key=value`; the keys are {KEYS}"));
        };
        let (key, value) = (key.trim(), value.trim());
        let whole = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("`{key}={value}`: expected a whole number"))
        };
        budget = match key {
            "tokens" => budget.tokens(whole()?),
            "input_tokens" => budget.input_tokens(whole()?),
            "output_tokens" => budget.output_tokens(whole()?),
            "requests" => budget.requests(u32::try_from(whole()?).unwrap_or(u32::MAX)),
            "tool_calls" => budget.tool_calls(u32::try_from(whole()?).unwrap_or(u32::MAX)),
            "active_seconds" => budget.active_time(Duration::from_secs(whole()?)),
            "usd" => match value.trim_start_matches('$').parse::<f64>() {
                Ok(usd) if usd.is_finite() && usd > 0.0 => budget.usd(usd),
                _ => {
                    return Err(format!(
                        "`usd={value}`: expected dollars above zero, such as 0.50"
                    ));
                }
            },
            other => return Err(format!("`{other}` is not a budget; the keys are {KEYS}")),
        };
    }
    if !budget.is_bounded() {
        return Err(format!(
            "`--budget` names no bound; write `key=value`, the keys being {KEYS}"
        ));
    }
    Ok(budget)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn bounds_are_read_and_mistakes_named() {
        let budget = parse("tokens=2000, usd=$0.25,requests=3").unwrap();
        assert_eq!(budget.max_requests(), Some(3));
        assert!(parse("tokens=many").unwrap_err().contains("whole number"));
        assert!(parse("dollars=1").unwrap_err().contains("the keys are"));
        assert!(parse("usd=-1").unwrap_err().contains("above zero"));
        assert!(parse("").unwrap_err().contains("names no bound"));
    }
}
