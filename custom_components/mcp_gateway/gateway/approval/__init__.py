"""A person's approval of sensitive calls: what needs it, grants, approvers."""
