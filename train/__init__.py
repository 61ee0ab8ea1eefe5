"""GRPO training of negotiating sellers (TRL + peft) on whole negotiations."""
