"""The branches of `edgewise.agent.exceptions`' tree that live apart from it: its roots (`base`) and the errors of
requests to model APIs (`model_api`). Import them from `edgewise.agent.exceptions`."""
