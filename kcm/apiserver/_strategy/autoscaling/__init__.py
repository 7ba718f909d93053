"""Strategies of autoscaling kinds."""
