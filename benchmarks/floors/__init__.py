"""The floors of `benchmarks.floor`: each agent family's update written directly in PyTorch,
with no framework around it (`value`: DQN, C51, QR-DQN; `continuous`: SAC, TD3, DDPG;
`policy`: Clipped PPO; `common`: what they share)."""
