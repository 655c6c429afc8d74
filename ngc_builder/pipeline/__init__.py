"""One release run: the scheduler, one image's lifecycle through the stages, what need not be done
again, and `plan`'s decisions."""
