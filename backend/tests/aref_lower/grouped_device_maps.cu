// threads 256, dynamic shared memory 26624 bytes
// workspace for tensor maps built on the device: 512 bytes per program
// tw_tmap0: f16 template of a map built on the device, box [32, 64], swizzle 64B, L2 promotion 256B
// tw_tmap1: f16 template of a map built on the device, box [64, 32], swizzle 128B, L2 promotion 256B
extern "C" __global__ void __launch_bounds__(256, 1) grouped_gemm(long long* __restrict__ a_ptrs_, long long* __restrict__ b_ptrs_, long long* __restrict__ c_ptrs_, int* __restrict__ sizes_, int* __restrict__ lds_, int group_size_, const __grid_constant__ tw_tmap tw_tmap0, const __grid_constant__ tw_tmap tw_tmap1, unsigned char* __restrict__ tw_tmap_ws) {
  const int tid = threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int warp = __shfl_sync(0xffffffff, (int)(threadIdx.x >> 5), 0);
  (void)tid; (void)lane; (void)warp;
  const unsigned tw_smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
  (void)tw_smem_u32;
  unsigned char* const tw_smem = tw_smem_raw + 17408;
  // 10:5  
  // aref: 2 slots of 8192 bytes at 0, full/empty barriers at 16384/16400
  if (threadIdx.x == 0) {
  #pragma unroll
    for (int s = 0; s < 2; ++s) {
      tw_mbar_init(tw_smem_u32 + 16384 + 8 * s, 1);
      tw_mbar_init(tw_smem_u32 + 16400 + 8 * s, 4);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x < 128) {
    // partition producer (4 warps, from warp 0)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;" ::: "memory");
    const int tid = threadIdx.x - 0;
    const int lane = tid & 31;
    const int warp = __shfl_sync(0xffffffff, tid >> 5, 0);
    (void)tid; (void)lane; (void)warp;
    int const c0_1 = (int)(0LL);
    int const c1_2 = (int)(1LL);
    int const c2_3 = (int)(2LL);
    int const c3_4 = (int)(3LL);
    int const c32_5 = (int)(32LL);
    int const c64_6 = (int)(64LL);
    long long const one_7 = (long long)(1LL);
    // 11:5  
    int n_8;
    n_8 = c0_1;
    for (int g_9 = c0_1; g_9 < group_size_; g_9 += c1_2) {
      int const g3_10 = (int)((unsigned)g_9 * (unsigned)c3_4);
      int* const ps_11 = (sizes_ + g3_10);
      int const gm_12 = *ps_11;
      // 12:9  
      int* const ps1_13 = (ps_11 + c1_2);
      int const gn_14 = *ps1_13;
      // 13:9  
      int* const ps2_15 = (ps_11 + c2_3);
      int const gk_16 = *ps2_15;
      // 14:9  
      int* const pl_17 = (lds_ + g3_10);
      int const lda_18 = *pl_17;
      // 15:9  
      int* const pl1_19 = (pl_17 + c1_2);
      int const ldb_20 = *pl1_19;
      // 16:9  
      long long* const pa_21 = (a_ptrs_ + g_9);
      long long const a_int_22 = *pa_21;
      tw_f16* const a_base_23 = (tw_f16*)(unsigned long long)(a_int_22);
      // 17:9  
      long long* const pb_24 = (b_ptrs_ + g_9);
      long long const b_int_25 = *pb_24;
      tw_f16* const b_base_26 = (tw_f16*)(unsigned long long)(b_int_25);
      // 18:9  
      long long const lda64_27 = (long long)(lda_18);
      tw_f16* const a_desc_28_base = (tw_f16*)(a_base_23);
      long long const a_desc_28_shape0 = (long long)(gm_12);
      long long const a_desc_28_shape1 = (long long)(gk_16);
      long long const a_desc_28_stride0 = (long long)(lda64_27);
      long long const a_desc_28_stride1 = (long long)(one_7);
      // 19:9  
      long long const ldb64_29 = (long long)(ldb_20);
      tw_f16* const b_desc_30_base = (tw_f16*)(b_base_26);
      long long const b_desc_30_shape0 = (long long)(gk_16);
      long long const b_desc_30_shape1 = (long long)(gn_14);
      long long const b_desc_30_stride0 = (long long)(ldb64_29);
      long long const b_desc_30_stride1 = (long long)(one_7);
      // 20:9  
      int const pid_31 = (int)blockIdx.x;
      int const mt0_32 = (int)((unsigned)gm_12 + (unsigned)c64_6);
      int const mt1_33 = (int)((unsigned)mt0_32 - (unsigned)c1_2);
      int const mtiles_34 = (mt1_33 / c64_6);
      // 21:9  
      int const kt0_35 = (int)((unsigned)gk_16 + (unsigned)c32_5);
      int const kt1_36 = (int)((unsigned)kt0_35 - (unsigned)c1_2);
      int const ktiles_37 = (kt1_36 / c32_5);
      // 22:9  
      int n_t_38;
      n_t_38 = n_8;
      for (int t_39 = pid_31; t_39 < mtiles_34; t_39 += c1_2) {
        int const row_40 = (int)((unsigned)t_39 * (unsigned)c64_6);
        // 23:13  
        int n_k0_41;
        n_k0_41 = n_t_38;
        for (int kk_42 = c0_1; kk_42 < ktiles_37; kk_42 += c1_2) {
          int const col_43 = (int)((unsigned)kk_42 * (unsigned)c32_5);
          // 24:17  
          const unsigned slot44 = (unsigned)(n_k0_41) % 2u, parity45 = ((unsigned)(n_k0_41) / 2u) & 1u;
          if (tid == 0) {
            tw_mbar_wait(tw_smem_u32 + 16400 + 8 * slot44, parity45 ^ 1u);
            tw_mbar_expect_tx(tw_smem_u32 + 16384 + 8 * slot44, 8192);
            tw_tmap* const dmap46 = (tw_tmap*)(tw_tmap_ws + tw_program_linear() * tw_dmap_ws_bytes + 0ull);
            const unsigned long long dval47[4] = {(unsigned long long)(a_desc_28_base), (unsigned long long)(a_desc_28_shape1), (unsigned long long)(a_desc_28_shape0), (unsigned long long)(a_desc_28_stride0) * 2ull};
            if (tw_dmap_stale(dmap46, dval47, 4, (unsigned)(n_k0_41) == 0u)) {
              for (unsigned tw_j = 1u; tw_j < 2u && tw_j <= (unsigned)(n_k0_41); ++tw_j) { const unsigned tw_p = (unsigned)(n_k0_41) - tw_j; tw_mbar_wait(tw_smem_u32 + 16384 + 8 * (tw_p % 2u), (tw_p / 2u) & 1u); }
              tw_dmap_check(dval47, 2);
              tw_dmap_copy(dmap46, &tw_tmap0);
              asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" :: "l"(__cvta_generic_to_global(dmap46)), "l"(dval47[0]) : "memory");
              asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 0, %1;" :: "l"(__cvta_generic_to_global(dmap46)), "r"((unsigned)dval47[1]) : "memory");
              asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 1, %1;" :: "l"(__cvta_generic_to_global(dmap46)), "r"((unsigned)dval47[2]) : "memory");
              asm volatile("tensormap.replace.tile.global_stride.global.b1024.b64 [%0], 0, %1;" :: "l"(__cvta_generic_to_global(dmap46)), "l"(dval47[3]) : "memory");
              tw_dmap_publish(dmap46, dval47, 4);
            }
            tw_tma_2d(tw_smem_u32 + 0 + slot44 * 8192 + 0 + 0, dmap46, (int)(col_43) + 0, (int)(row_40), tw_smem_u32 + 16384 + 8 * slot44);
            tw_tmap* const dmap48 = (tw_tmap*)(tw_tmap_ws + tw_program_linear() * tw_dmap_ws_bytes + 256ull);
            const unsigned long long dval49[4] = {(unsigned long long)(b_desc_30_base), (unsigned long long)(b_desc_30_shape1), (unsigned long long)(b_desc_30_shape0), (unsigned long long)(b_desc_30_stride0) * 2ull};
            if (tw_dmap_stale(dmap48, dval49, 4, (unsigned)(n_k0_41) == 0u)) {
              for (unsigned tw_j = 1u; tw_j < 2u && tw_j <= (unsigned)(n_k0_41); ++tw_j) { const unsigned tw_p = (unsigned)(n_k0_41) - tw_j; tw_mbar_wait(tw_smem_u32 + 16384 + 8 * (tw_p % 2u), (tw_p / 2u) & 1u); }
              tw_dmap_check(dval49, 2);
              tw_dmap_copy(dmap48, &tw_tmap1);
              asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" :: "l"(__cvta_generic_to_global(dmap48)), "l"(dval49[0]) : "memory");
              asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 0, %1;" :: "l"(__cvta_generic_to_global(dmap48)), "r"((unsigned)dval49[1]) : "memory");
              asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 1, %1;" :: "l"(__cvta_generic_to_global(dmap48)), "r"((unsigned)dval49[2]) : "memory");
              asm volatile("tensormap.replace.tile.global_stride.global.b1024.b64 [%0], 0, %1;" :: "l"(__cvta_generic_to_global(dmap48)), "l"(dval49[3]) : "memory");
              tw_dmap_publish(dmap48, dval49, 4);
            }
            tw_tma_2d(tw_smem_u32 + 0 + slot44 * 8192 + 4096 + 0, dmap48, (int)(c0_1) + 0, (int)(col_43), tw_smem_u32 + 16384 + 8 * slot44);
          }
          int const n_next_50 = (int)((unsigned)n_k0_41 + (unsigned)c1_2);
          int n_k0_51;
          n_k0_51 = n_next_50;
          n_k0_41 = n_k0_51;
        }
        int n_t_52;
        n_t_52 = n_k0_41;
        n_t_38 = n_t_52;
      }
      int n_53;
      n_53 = n_t_38;
      n_8 = n_53;
    }
  } else {
    // partition consumer (4 warps, from warp 4)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 232;" ::: "memory");
    const int tid = threadIdx.x - 128;
    const int lane = tid & 31;
    const int warp = __shfl_sync(0xffffffff, tid >> 5, 0);
    (void)tid; (void)lane; (void)warp;
    // 10:5  
    int const d0_54 = (int)(0LL);
    int const d1_55 = (int)(1LL);
    int const d2_56 = (int)(2LL);
    int const d3_57 = (int)(3LL);
    int const d32_58 = (int)(32LL);
    int const d64_59 = (int)(64LL);
    // 11:5  
    int m_60;
    m_60 = d0_54;
    for (int h_61 = d0_54; h_61 < group_size_; h_61 += d1_55) {
      int const h3_62 = (int)((unsigned)h_61 * (unsigned)d3_57);
      int* const qs_63 = (sizes_ + h3_62);
      int const hm_64 = *qs_63;
      // 13:9  
      int* const qs2_65 = (qs_63 + d2_56);
      int const hk_66 = *qs2_65;
      // 14:9  
      int* const ql_67 = (lds_ + h3_62);
      // 15:9  
      int* const ql2_68 = (ql_67 + d2_56);
      int const ldc_69 = *ql2_68;
      // 16:9  
      long long* const pc_70 = (c_ptrs_ + h_61);
      long long const c_int_71 = *pc_70;
      tw_f16* const c_base_72 = (tw_f16*)(unsigned long long)(c_int_71);
      // 20:9  
      int const pid_1_73 = (int)blockIdx.x;
      int const nt0_74 = (int)((unsigned)hm_64 + (unsigned)d64_59);
      int const nt1_75 = (int)((unsigned)nt0_74 - (unsigned)d1_55);
      int const ntiles_76 = (nt1_75 / d64_59);
      // 21:9  
      int const jt0_77 = (int)((unsigned)hk_66 + (unsigned)d32_58);
      int const jt1_78 = (int)((unsigned)jt0_77 - (unsigned)d1_55);
      int const jtiles_79 = (jt1_78 / d32_58);
      // 22:9  
      int m_t_80;
      m_t_80 = m_60;
      for (int u_81 = pid_1_73; u_81 < ntiles_76; u_81 += d1_55) {
        float acc_82[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) acc_82[r] = 0.0f;
        // 23:13  
        float acc_2_83[32];
        float acc_84[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) acc_84[r] = 0.0f;
        #pragma unroll
        for (int r = 0; r < 32; ++r) acc_2_83[r] = acc_84[r];
        int m_k0_85;
        m_k0_85 = m_t_80;
        for (int jj_86 = d0_54; jj_86 < jtiles_79; jj_86 += d1_55) {
          const unsigned slot87 = (unsigned)(m_k0_85) % 2u, parity88 = ((unsigned)(m_k0_85) / 2u) & 1u;
          tw_mbar_wait(tw_smem_u32 + 16384 + 8 * slot87, parity88);
          // 25:17  
          // dot 64x64x32 (#mma<v3, warps = [4, 1], instr = 16x64>)
          float acc_3_89[32];
          #pragma unroll
          for (int r = 0; r < 32; ++r) acc_3_89[r] = acc_2_83[r];
          {
            const unsigned smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
            const int gm_ = (warp / 4) % 1, gn_ = warp / 4;
            #pragma unroll
            for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_3_89[r]) :: "memory");
            asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
            #pragma unroll
            for (int ks = 0; ks < 2; ++ks) {
              const unsigned kb = ks * 32;
              const unsigned k0 = ks * 16;
              const unsigned long long da = tw_desc(smem_u32 + (0 + slot87 * 8192 + 0) + (0 + gm_ * 64) * 64, tw_lin(0, kb, 64, 64), 64);
              const unsigned long long db = tw_desc_mn(smem_u32 + (0 + slot87 * 8192 + 4096) + tw_lin(0, (0 + gn_ * 64) * 2, 32, 128), k0 * 128, 128, 32);
              asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 1;\n}"
                : "+f"(acc_3_89[0]), "+f"(acc_3_89[1]), "+f"(acc_3_89[2]), "+f"(acc_3_89[3]), "+f"(acc_3_89[4]), "+f"(acc_3_89[5]), "+f"(acc_3_89[6]), "+f"(acc_3_89[7]), "+f"(acc_3_89[8]), "+f"(acc_3_89[9]), "+f"(acc_3_89[10]), "+f"(acc_3_89[11]), "+f"(acc_3_89[12]), "+f"(acc_3_89[13]), "+f"(acc_3_89[14]), "+f"(acc_3_89[15]), "+f"(acc_3_89[16]), "+f"(acc_3_89[17]), "+f"(acc_3_89[18]), "+f"(acc_3_89[19]), "+f"(acc_3_89[20]), "+f"(acc_3_89[21]), "+f"(acc_3_89[22]), "+f"(acc_3_89[23]), "+f"(acc_3_89[24]), "+f"(acc_3_89[25]), "+f"(acc_3_89[26]), "+f"(acc_3_89[27]), "+f"(acc_3_89[28]), "+f"(acc_3_89[29]), "+f"(acc_3_89[30]), "+f"(acc_3_89[31])
                : "l"(da), "l"(db));
            }
            asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
            #pragma unroll
            for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_3_89[r]) :: "memory");
          }
          const unsigned slot90 = (unsigned)(m_k0_85) % 2u, parity91 = ((unsigned)(m_k0_85) / 2u) & 1u;
          if (lane == 0) tw_mbar_arrive(tw_smem_u32 + 16400 + 8 * slot90);
          int const m_next_92 = (int)((unsigned)m_k0_85 + (unsigned)d1_55);
          float acc_2_93[32];
          #pragma unroll
          for (int r = 0; r < 32; ++r) acc_2_93[r] = acc_3_89[r];
          int m_k0_94;
          m_k0_94 = m_next_92;
          #pragma unroll
          for (int r = 0; r < (int)(sizeof(acc_2_83) / sizeof(acc_2_83[0])); ++r) acc_2_83[r] = acc_2_93[r];
          m_k0_85 = m_k0_94;
        }
        // 26:13  
        int const rows0_95 = (int)((unsigned)u_81 * (unsigned)d64_59);
        int rr_96[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) rr_96[r] = 0 + (((lane % 32) + (warp % 4) * 32 + 0) & 63);
        int rs_97[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) rs_97[r] = rows0_95;
        int rows_98[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) rows_98[r] = (int)((unsigned)rs_97[r] + (unsigned)rr_96[r]);
        int rs_101[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) rs_101[r] = rows0_95;
        int rr_102[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) rr_102[r] = 0 + (((lane % 32) + (warp % 4) * 32 + 0) & 63);
        int rows_100[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) rows_100[r] = (int)((unsigned)rs_101[r] + (unsigned)rr_102[r]);
        int re_99[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) re_99[r] = rows_100[0];
        int ls_103[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) ls_103[r] = ldc_69;
        int ro_104[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) ro_104[r] = (int)((unsigned)re_99[r] * (unsigned)ls_103[r]);
        tw_f16* cs_105[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) cs_105[r] = c_base_72;
        tw_f16* cr_106[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) cr_106[r] = cs_105[r] + ro_104[r];
        int cc_107[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) cc_107[r] = 0 + (((lane % 32) + (warp % 4) * 32 + 0) & 63);
        int cc_109[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) cc_109[r] = 0 + (((lane % 32) + (warp % 2) * 32 + 0) & 63);
        int ce_108[1];
        #pragma unroll
        for (int r = 0; r < 1; ++r) ce_108[r] = cc_109[0];
        tw_f16* crb_110[64];
        #pragma unroll
        for (int r = 0; r < 64; ++r) crb_110[r] = cr_106[0];
        int ceb_111[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) ceb_111[r] = ce_108[0];
        int cc_115[64];
        #pragma unroll
        for (int r = 0; r < 64; ++r) cc_115[r] = 0 + ((0 + ((r / 1) % 64) * 1) & 63);
        int ce_114[64];
        #pragma unroll
        for (int r = 0; r < 64; ++r) ce_114[r] = cc_115[((r / 1) % 64) * 1];
        int ceb_113[64];
        #pragma unroll
        for (int r = 0; r < 64; ++r) ceb_113[r] = ce_114[((r / 1) % 64) * 1];
        tw_f16* cp_112[64];
        #pragma unroll
        for (int r = 0; r < 64; ++r) cp_112[r] = crb_110[r] + ceb_113[r];
        // 27:13  
        tw_f16 c_116[32];
        #pragma unroll
        for (int r = 0; r < 32; r += 2) tw_f2h2(acc_2_83[r], acc_2_83[r + 1], c_116[r], c_116[r + 1]);
        tw_f16* cs_120[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) cs_120[r] = c_base_72;
        int rs_124[4];
        #pragma unroll
        for (int r = 0; r < 4; ++r) rs_124[r] = rows0_95;
        int rr_125[4];
        #pragma unroll
        for (int r = 0; r < 4; ++r) rr_125[r] = 0 + (((lane / 8 % 4) + (warp % 4) * 4 + ((r / 1) % 4) * 16) & 63);
        int rows_123[4];
        #pragma unroll
        for (int r = 0; r < 4; ++r) rows_123[r] = (int)((unsigned)rs_124[r] + (unsigned)rr_125[r]);
        int re_122[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) re_122[r] = rows_123[((r / 8) % 4) * 1];
        int ls_126[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) ls_126[r] = ldc_69;
        int ro_121[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) ro_121[r] = (int)((unsigned)re_122[r] * (unsigned)ls_126[r]);
        tw_f16* cr_119[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) cr_119[r] = cs_120[r] + ro_121[r];
        tw_f16* crb_118[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) crb_118[r] = cr_119[((r / 8) % 4) * 8];
        int cc_129[8];
        #pragma unroll
        for (int r = 0; r < 8; ++r) cc_129[r] = 0 + (((lane % 8) * 8 + ((r / 1) % 8) * 1) & 63);
        int ce_128[8];
        #pragma unroll
        for (int r = 0; r < 8; ++r) ce_128[r] = cc_129[((r / 1) % 8) * 1];
        int ceb_127[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) ceb_127[r] = ce_128[((r / 1) % 8) * 1];
        tw_f16* cp_117[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) cp_117[r] = crb_118[r] + ceb_127[r];
        // #mma<v3, warps = [4, 1], instr = 16x64> -> #blocked<spt = [1, 8], tpw = [4, 8], wpc = [4, 1], order = [1, 0]> through shared memory (2- and 8-element vectors, padded rows)
        asm volatile("bar.sync 2, 128;" ::: "memory");
        #pragma unroll
        for (int r = 0; r < 32; r += 2) {
          union { unsigned u; tw_f16 e[2]; } t;
          #pragma unroll
          for (int e = 0; e < 2; ++e) t.e[e] = c_116[r + e];
          *(unsigned*)((tw_f16*)tw_smem + (((lane % 4) * 2 + ((r / 1) % 2) * 1 + ((r / 4) % 8) * 8) & 63) + ((((lane / 4 % 8) + (warp % 4) * 16 + ((r / 2) % 2) * 8) & 63)) * 72) = t.u;
        }
        asm volatile("bar.sync 2, 128;" ::: "memory");
        tw_f16 c_130[32];
        #pragma unroll
        for (int r = 0; r < 32; r += 8) {
          union { uint4 u; tw_f16 e[8]; } t;
          t.u = *(uint4*)((tw_f16*)tw_smem + (((lane % 8) * 8 + ((r / 1) % 8) * 1) & 63) + ((((lane / 8 % 4) + (warp % 4) * 4 + ((r / 8) % 4) * 16) & 63)) * 72);
          #pragma unroll
          for (int e = 0; e < 8; ++e) c_130[r + e] = t.e[e];
        }
        bool aligned131 = true;
        #pragma unroll
        for (int g = 0; g < 32; g += 8) aligned131 &= (((unsigned long long)cp_117[g]) & 15ull) == 0;
        if (aligned131) {
          #pragma unroll
          for (int g = 0; g < 4; ++g) {
          union { uint4 u; tw_f16 e[8]; } t;
          #pragma unroll
          for (int e = 0; e < 8; ++e) t.e[e] = c_130[g * 8 + e];
          *(uint4*)(cp_117[g * 8]) = t.u;
          }
        } else {
          #pragma unroll
          for (int r = 0; r < 32; ++r) *(cp_117[r - r % 8] + r % 8) = c_130[r];
        }
        int m_t_132;
        m_t_132 = m_k0_85;
        m_t_80 = m_t_132;
      }
      int m_133;
      m_133 = m_t_80;
      m_60 = m_133;
    }
  }
  // 28:1  
}
