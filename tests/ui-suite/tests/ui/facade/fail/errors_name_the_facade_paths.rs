// A user's type error names Iris's types by the paths the user wrote
// (`iris::model::Model`, `iris::agent::Agent`), never by the crates behind
// the facade (`iris::iris_model::Model`).

struct Agent;

fn needs_a_model(_model: impl iris::model::Model) {}

fn needs_an_agent(_agent: iris::agent::Agent) {}

fn main() {
    needs_a_model(5u8);
    needs_an_agent(Agent);
}
