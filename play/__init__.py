"""Human play against the agents: a terminal game (``sixtysix play``) and a browser app (``sixtysix serve``).

:mod:`play.session` owns a human-vs-agent deal or Bummerl server-side and shows it only as the human may see it;
:mod:`play.analysis` answers "could I have won?"; :mod:`play.terminal` and :mod:`play.web` are the two front ends.
Nothing else in the project imports this package.
"""
