//! A reader of CloudFormation templates as plain YAML, and a small
//! evaluator of the intrinsic functions a stack's policies use ([`Stack`]),
//! for the template's checks (`super`).

use std::collections::BTreeSet;

use serde_yaml::Value;

/// Looks through CloudFormation short-form tags: `!Sub x` is `x`.
pub fn untag(value: &Value) -> &Value {
    match value {
        Value::Tagged(tagged) => untag(&tagged.value),
        other => other,
    }
}

pub fn field<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match untag(value) {
        Value::Mapping(map) => map.get(key),
        _ => None,
    }
}

pub fn at<'a>(value: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().try_fold(value, |v, key| field(v, key))
}

/// The text of a scalar: a plain string, or the template string of a `!Sub`
/// (in both its forms), or the target of a `!Ref` / `!GetAtt`.
pub fn text(value: &Value) -> Option<String> {
    match untag(value) {
        Value::String(s) => Some(s.clone()),
        Value::Sequence(items) => items.first().and_then(text),
        _ => None,
    }
}

/// Every string anywhere inside `value`, tags looked through.
pub fn strings(value: &Value, out: &mut Vec<String>) {
    match untag(value) {
        Value::String(s) => out.push(s.clone()),
        Value::Sequence(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Mapping(map) => map.iter().for_each(|(k, v)| {
            strings(k, out);
            strings(v, out);
        }),
        _ => {}
    }
}

pub fn keys(value: Option<&Value>) -> BTreeSet<String> {
    match value.map(untag) {
        Some(Value::Mapping(map)) => map.keys().filter_map(text).collect(),
        _ => BTreeSet::new(),
    }
}

/// `(logical id, resource)` of every resource.
pub fn resources(template: &Value) -> Vec<(String, &Value)> {
    match field(template, "Resources").map(untag) {
        Some(Value::Mapping(map)) => map
            .iter()
            .filter_map(|(k, v)| Some((text(k)?, v)))
            .collect(),
        _ => panic!("template.yaml has no Resources"),
    }
}

pub fn resource_type(resource: &Value) -> String {
    field(resource, "Type").and_then(text).unwrap_or_default()
}

pub fn is_function(resource: &Value) -> bool {
    matches!(
        resource_type(resource).as_str(),
        "AWS::Serverless::Function" | "AWS::Lambda::Function"
    )
}

/// `value` as the intrinsic function `name` (`Ref`, `Sub`, `If` ...), in
/// its short form (`!Sub x`) or its long one (`Fn::Sub: x`): its argument.
pub fn intrinsic<'a>(value: &'a Value, name: &str) -> Option<&'a Value> {
    match value {
        Value::Tagged(tagged) if tagged.tag == name => Some(&tagged.value),
        Value::Mapping(map) if map.len() == 1 => {
            let long = if name == "Ref" || name == "Condition" {
                name.to_owned()
            } else {
                format!("Fn::{name}")
            };
            map.get(long.as_str())
        }
        _ => None,
    }
}

/// A stack as CloudFormation would see it with the given parameters: the
/// template's conditions, and the values of the intrinsic functions the
/// Bedrock policies use (`Ref`, `Sub`, `If`, `Equals`, `Not`, `And`, `Or`,
/// `Condition`), with a `Fn::ForEach` loop variable. Anything else fails
/// the test, so that a template change cannot pass unevaluated.
pub struct Stack<'a> {
    pub template: &'a Value,
    pub parameters: Vec<(&'static str, serde_json::Value)>,
    pub loop_variable: Option<(String, String)>,
}

pub const ACCOUNT: &str = "123456789012";
pub const REGION: &str = "us-east-1";

impl Stack<'_> {
    pub fn lookup(&self, name: &str) -> Option<serde_json::Value> {
        let pseudo = match name {
            "AWS::Partition" => Some("aws"),
            "AWS::Region" => Some(REGION),
            "AWS::AccountId" => Some(ACCOUNT),
            "AWS::StackName" => Some("myao"),
            _ => None,
        };
        if let Some(value) = pseudo {
            return Some(value.into());
        }
        if let Some((variable, value)) = &self.loop_variable {
            if variable == name {
                return Some(value.as_str().into());
            }
        }
        if let Some((_, value)) = self.parameters.iter().find(|(n, _)| *n == name) {
            return Some(value.clone());
        }
        let default = at(self.template, &["Parameters", name, "Default"]).and_then(text)?;
        Some(default.into())
    }

    pub fn condition(&self, name: &str) -> bool {
        let definition = at(self.template, &["Conditions", name])
            .unwrap_or_else(|| panic!("no condition {name}"));
        self.truth(definition)
    }

    pub fn truth(&self, value: &Value) -> bool {
        let list = |v: &Value| v.as_sequence().cloned().unwrap_or_default();
        if let Some(args) = intrinsic(value, "Equals") {
            let args = list(args);
            assert_eq!(args.len(), 2, "Equals takes two values");
            return self.eval(&args[0]) == self.eval(&args[1]);
        }
        if let Some(args) = intrinsic(value, "Not") {
            return !self.truth(list(args).first().expect("Not takes one condition"));
        }
        if let Some(args) = intrinsic(value, "And") {
            return list(args).iter().all(|c| self.truth(c));
        }
        if let Some(args) = intrinsic(value, "Or") {
            return list(args).iter().any(|c| self.truth(c));
        }
        if let Some(name) = intrinsic(value, "Condition").and_then(text) {
            return self.condition(&name);
        }
        panic!("not a condition: {value:?}")
    }

    /// The value of `value`; `None` for `AWS::NoValue`. A resource's `Ref`
    /// is `ref:<logical id>`, its `GetAtt` `getatt:<id>.<attribute>`.
    pub fn eval(&self, value: &Value) -> Option<serde_json::Value> {
        if let Some(name) = intrinsic(value, "Ref").and_then(text) {
            if name == "AWS::NoValue" {
                return None;
            }
            return Some(
                self.lookup(&name)
                    .unwrap_or_else(|| format!("ref:{name}").into()),
            );
        }
        if let Some(template) = intrinsic(value, "Sub") {
            let template = match untag(template) {
                Value::String(s) => s.clone(),
                other => panic!("only the one-string form of Sub is evaluated: {other:?}"),
            };
            let mut out = String::new();
            let mut rest = template.as_str();
            while let Some(start) = rest.find("${") {
                out.push_str(&rest[..start]);
                let (name, after) = rest[start + 2..]
                    .split_once('}')
                    .unwrap_or_else(|| panic!("unclosed ${{ in {template}"));
                match self.lookup(name) {
                    Some(serde_json::Value::String(v)) => out.push_str(&v),
                    // A resource's attribute (`${Table.Arn}`) stays a name.
                    None => out.push_str(&format!("<{name}>")),
                    other => panic!("${{{name}}} in {template} is {other:?}"),
                }
                rest = after;
            }
            out.push_str(rest);
            return Some(out.into());
        }
        if let Some(target) = intrinsic(value, "GetAtt").and_then(text) {
            return Some(format!("getatt:{target}").into());
        }
        if let Some(args) = intrinsic(value, "If") {
            let args = args.as_sequence().cloned().unwrap_or_default();
            assert_eq!(args.len(), 3, "If takes a condition and two values");
            let name = text(&args[0]).expect("a condition name");
            let chosen = if self.condition(&name) {
                &args[1]
            } else {
                &args[2]
            };
            return self.eval(chosen);
        }
        match value {
            Value::Tagged(tagged) => panic!("{} is not evaluated here", tagged.tag),
            Value::Mapping(map) => {
                if let Some(key) = map
                    .keys()
                    .filter_map(Value::as_str)
                    .find(|k| k.starts_with("Fn::"))
                {
                    panic!("{key} is not evaluated here");
                }
                Some(serde_json::Value::Object(
                    map.iter()
                        .filter_map(|(k, v)| Some((text(k)?, self.eval(v)?)))
                        .collect(),
                ))
            }
            Value::Sequence(items) => Some(serde_json::Value::Array(
                items.iter().filter_map(|v| self.eval(v)).collect(),
            )),
            Value::String(s) => Some(s.as_str().into()),
            Value::Bool(b) => Some((*b).into()),
            Value::Number(n) => serde_json::to_value(n.as_f64()).ok(),
            Value::Null => Some(serde_json::Value::Null),
        }
    }

    /// The resources that `Fn::ForEach::<name>` in Resources makes, by
    /// logical id, with each one's `Condition` applied.
    pub fn for_each(&self, name: &str) -> Vec<(String, serde_json::Value)> {
        let key = format!("Fn::ForEach::{name}");
        let the_loop = at(self.template, &["Resources", &key])
            .and_then(|v| untag(v).as_sequence())
            .unwrap_or_else(|| panic!("no {key} in Resources"));
        let [variable, collection, fragment] = &the_loop[..] else {
            panic!("{key} is not [identifier, collection, fragment]");
        };
        let variable = text(variable).expect("an identifier");
        let items = match self.eval(collection) {
            Some(serde_json::Value::Array(items)) => items,
            other => panic!("{key}'s collection is {other:?}"),
        };
        let Value::Mapping(fragment) = untag(fragment) else {
            panic!("{key}'s fragment is not a mapping");
        };
        let mut made = Vec::new();
        for item in items {
            let item = item.as_str().expect("a string item").to_owned();
            let inner = Stack {
                template: self.template,
                parameters: self.parameters.clone(),
                loop_variable: Some((variable.clone(), item.clone())),
            };
            let alphanumeric: String = item.chars().filter(char::is_ascii_alphanumeric).collect();
            for (id, resource) in fragment {
                let id = text(id)
                    .expect("a logical id")
                    .replace(&format!("&{{{variable}}}"), &alphanumeric)
                    .replace(&format!("${{{variable}}}"), &item);
                let created = field(resource, "Condition")
                    .and_then(text)
                    .is_none_or(|c| inner.condition(&c));
                if created {
                    made.push((id, inner.eval(resource).expect("a resource")));
                }
            }
        }
        made
    }
}
