"""Operator actions, carried out and audited: the one way a face asks for one."""
